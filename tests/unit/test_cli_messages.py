"""What `cdc-dbt` says before any JVM starts: usage, version, folders that do not exist, a
warehouse another process holds, a Spark master nobody answers at.

Each case runs the command as a user does, in its own process, with no Java reachable (no
JAVA_HOME, a PATH without `java`): an answer that needed Spark would be the Java-missing line
instead of the one asserted.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_dbt.cli import DBT_COMMANDS, DBT_SUBCOMMANDS, OWN_COMMANDS, unknown_command
from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from cdc_dbt.warehouse_lock import WarehouseInUseError, hold_warehouse

CLI = [sys.executable, "-m", "cdc_dbt.cli"]


def cdc_dbt(*args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    without_java = {name: value for name, value in os.environ.items() if name not in ("JAVA_HOME", "CDC_SCHEMA")}
    without_java["PATH"] = "/nonexistent"
    return subprocess.run(
        [*CLI, *args],
        cwd=PACKAGE_PROJECT_DIR,
        env={**without_java, **environment},
        capture_output=True,
        text=True,
        timeout=300,  # a safety net, not a measure: dbt parses the project in ls and --help
    )


def test_no_arguments_prints_usage_and_the_environment_on_stderr() -> None:
    run = cdc_dbt()
    assert run.returncode == 2
    assert run.stdout == ""
    assert "usage:" in run.stderr
    assert all(name in run.stderr for name in ("CDC_LANDING_DIR", "CDC_WAREHOUSE_DIR", "SPARK_MASTER_URL"))


def test_help_prints_usage_on_stdout() -> None:
    run = cdc_dbt("--help")
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.startswith("`cdc-dbt`") and "cdc-dbt sql" in run.stdout


def test_version_is_one_line_with_what_it_runs_on() -> None:
    run = cdc_dbt("--version")
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.startswith("cdc-dbt 0.1.0 (dbt-core 1.11.") and len(run.stdout.splitlines()) == 1
    assert "pyspark 4.1.1" in run.stdout


def test_a_mistyped_command_is_named_in_one_line_with_the_nearest_command() -> None:
    run = cdc_dbt("biuld", "--select", "cdc_current")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.splitlines() == [
        "cdc-dbt: 'biuld' is not a command of cdc-dbt or dbt: did you mean 'build'? (cdc-dbt --help)"
    ]


def test_a_mistyped_command_of_a_dbt_command_group_is_named_too() -> None:
    run = cdc_dbt("docs", "genrate")
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "cdc-dbt: 'genrate' is not a command of dbt docs: did you mean 'generate'? (cdc-dbt --help)"
    ]


def test_an_unknown_command_with_none_near_it_lists_the_commands() -> None:
    run = cdc_dbt("--log-level", "debug", "frobnicate")
    assert run.returncode == 2
    [line] = run.stderr.splitlines()
    assert line.startswith("cdc-dbt: 'frobnicate' is not a command of cdc-dbt or dbt: the commands are build, ")
    assert all(f" {command}," in line for command in ("scaffold", "serve", "run-operation"))


def test_the_known_commands_are_cdc_dbts_own_and_every_command_of_dbt() -> None:
    """dbt's commands pass through to dbt: were dbt to add one, `cdc-dbt` must not call it a typo."""
    from dbt.cli.main import cli

    assert sorted(DBT_COMMANDS) == sorted(cli.commands)
    for group, commands in DBT_SUBCOMMANDS.items():
        assert sorted(commands) == sorted(getattr(cli.commands[group], "commands", {})), group
    assert not set(OWN_COMMANDS) & set(DBT_COMMANDS)
    for command in (*DBT_COMMANDS, *OWN_COMMANDS, "docs generate", "source freshness", "--warn-error build"):
        assert unknown_command(command.split()) is None, command


def test_a_build_of_a_landing_folder_that_does_not_exist_fails_naming_it(tmp_path: Path) -> None:
    landing, warehouse = tmp_path / "landnig", tmp_path / "warehouse"
    run = cdc_dbt("build", CDC_LANDING_DIR=str(landing), CDC_WAREHOUSE_DIR=str(warehouse))
    assert run.returncode == 2
    assert run.stderr.splitlines() == [f"cdc-dbt: the landing folder {landing} does not exist (CDC_LANDING_DIR)"]
    assert not landing.exists() and not warehouse.exists(), "nothing is created"


def test_a_table_format_cdc_dbt_does_not_write_is_named_in_one_line(tmp_path: Path) -> None:
    run = cdc_dbt("build", CDC_LANDING_DIR=str(tmp_path), CDC_TABLE_FORMAT="orc")
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "cdc-dbt: CDC_TABLE_FORMAT='orc' is no table format cdc-dbt writes: use one of delta, parquet, iceberg"
    ]


def test_a_query_of_a_warehouse_that_does_not_exist_fails_naming_it(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehuose"
    run = cdc_dbt("sql", "select count(*) from cdc.cdc_current", CDC_WAREHOUSE_DIR=str(warehouse))
    assert run.returncode == 2
    [line] = run.stderr.splitlines()
    assert line.startswith(f"cdc-dbt: no warehouse at {warehouse} (CDC_WAREHOUSE_DIR)")
    assert not warehouse.exists(), "a query never creates a warehouse"


def test_listing_the_project_needs_no_jvm_and_a_pipe_gets_no_colour_codes(tmp_path: Path) -> None:
    run = cdc_dbt("ls", "--select", "cdc_current", "--resource-type", "model", "--target-path", str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == "cdc_dbt.marts.core.cdc_current"
    assert "Running with dbt=" in run.stdout and "\x1b[" not in run.stdout


def test_a_dbt_commands_help_needs_no_jvm() -> None:
    run = cdc_dbt("build", "--help")
    assert run.returncode == 0, run.stderr
    assert "Usage:" in run.stdout and "--select" in run.stdout


def test_a_query_while_another_process_holds_the_warehouse_says_who_in_one_line(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    (warehouse / "tables").mkdir(parents=True)
    held = hold_warehouse(warehouse, "build")
    try:
        run = cdc_dbt("sql", "select 1", CDC_WAREHOUSE_DIR=str(warehouse))
    finally:
        held.close()
    assert run.returncode == 3
    [line] = run.stderr.splitlines()
    holder = f"process {os.getpid()} (cdc-dbt build, since"
    assert line.startswith(f"cdc-dbt: the warehouse {warehouse} is in use by {holder}")
    assert line.endswith(": wait for it to finish, then run this again")


def test_land_and_forget_while_another_process_holds_the_warehouse_say_who_in_one_line(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    (warehouse / "tables").mkdir(parents=True)
    held = hold_warehouse(warehouse, "build")
    try:
        land = cdc_dbt(
            "land", "some.topic", CDC_WAREHOUSE_DIR=str(warehouse), CDC_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:9"
        )
        forget = cdc_dbt("forget", "inventory.customers", '{"id": 1001}', CDC_WAREHOUSE_DIR=str(warehouse))
    finally:
        held.close()
    in_use = f"the warehouse {warehouse} is in use by process {os.getpid()} (cdc-dbt build, since"
    assert (land.returncode, forget.returncode) == (3, 3)
    [land_line], [forget_line] = land.stderr.splitlines(), forget.stderr.splitlines()
    assert land_line.startswith(f"cdc-dbt: {in_use}")  # land's says `cdc-dbt:`, as a query's does
    assert forget_line.startswith(f"cdc-dbt forget: {in_use}")


def test_land_says_a_mistake_in_its_arguments_without_touching_the_warehouse(tmp_path: Path) -> None:
    warehouse, no_file = tmp_path / "warehouse", tmp_path / "kafka.properties"
    usage = "cdc-dbt land <topic> ... | --pattern '<regex>' (--help)"
    for args, environment, line in (
        (["--pattern"], {}, "--pattern takes one regex and nothing else: cdc-dbt land --pattern '<regex>'"),
        (["some.topic", "--from-start"], {}, f"unknown option --from-start: {usage}"),
        (
            ["some.topic"],
            {"CDC_KAFKA_PROPERTIES_FILE": str(no_file)},
            f"CDC_KAFKA_PROPERTIES_FILE names {no_file}, which is no file",
        ),
    ):
        run = cdc_dbt("land", *args, CDC_WAREHOUSE_DIR=str(warehouse), **environment)
        assert (run.returncode, run.stderr.splitlines()) == (2, [f"cdc-dbt land: {line}"])
    assert not warehouse.exists(), "a land with a mistake neither creates nor locks the warehouse"


def test_land_and_forget_without_java_say_so_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "tables").mkdir()  # a warehouse that exists: forget gets as far as Java
    land = cdc_dbt("land", "some.topic", CDC_WAREHOUSE_DIR=str(tmp_path), CDC_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:9")
    forget = cdc_dbt("forget", "inventory.customers", '{"id": 1001}', CDC_WAREHOUSE_DIR=str(tmp_path))
    assert (land.returncode, forget.returncode) == (1, 1)
    [land_line], [forget_line] = land.stderr.splitlines(), forget.stderr.splitlines()
    assert land_line.startswith("cdc-dbt land: Java 17 or newer is needed")
    assert forget_line.startswith("cdc-dbt forget: Java 17 or newer is needed")


def test_a_killed_holder_leaves_the_warehouse_free(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_WAIT, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(WarehouseInUseError, match=f"in use by process {holder.pid} "):
        hold_warehouse(tmp_path, "sql")
    holder.kill()
    holder.wait()
    hold_warehouse(tmp_path, "sql").close()


HOLD_AND_WAIT = """
import sys, time
from pathlib import Path
from cdc_dbt.warehouse_lock import hold_warehouse
lock = hold_warehouse(Path(sys.argv[1]), "build")
print("held", flush=True)
time.sleep(120)
"""


def test_an_unreachable_spark_master_is_named_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on: bound, never listening
        closed.bind(("127.0.0.1", 0))
        master = f"spark://127.0.0.1:{closed.getsockname()[1]}"
        run = cdc_dbt(
            "build", CDC_LANDING_DIR=str(tmp_path), CDC_WAREHOUSE_DIR=str(tmp_path / "w"), SPARK_MASTER_URL=master
        )
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"cdc-dbt: cannot reach the Spark master {master} (SPARK_MASTER_URL): {master[8:]}: Connection refused"
    ]


def test_debug_says_what_it_can_without_a_jvm(tmp_path: Path) -> None:
    landing, warehouse = tmp_path / "landing", tmp_path / "w"
    landing.mkdir()
    _lock = hold_warehouse(warehouse, "build")  # as a build in another process would
    # No Java on the PATH: the check says so, and everything else answers without one.
    run = cdc_dbt("debug", "--target-path", str(tmp_path / "target"), CDC_LANDING_DIR=str(landing),
                  CDC_WAREHOUSE_DIR=str(warehouse))  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("cdc-dbt ")]
    assert lines[:7] == [
        f"cdc-dbt project folder: {PACKAGE_PROJECT_DIR}",
        f"cdc-dbt landing folder: {landing}",
        f"cdc-dbt warehouse:      {warehouse}",
        "cdc-dbt Spark master:   embedded (local[*]); SPARK_MASTER_URL names a cluster",
        "cdc-dbt table format:   delta (CDC_TABLE_FORMAT)",
        "cdc-dbt Java:           not found: Spark needs Java 17 or newer",
        f"cdc-dbt warehouse held: process {os.getpid()} (cdc-dbt build, since " + lines[6].split("since ")[-1],
    ]
    assert re.fullmatch(r"cdc-dbt dbt project:    parses: \d+ models, \d+ data tests, \d+ unit tests", lines[7])
    assert lines[8].startswith("cdc-dbt Spark session:  not started by this check; `cdc-dbt debug --connection`")


def test_plain_dbt_stops_at_once_saying_to_use_cdc_dbt_and_writes_no_warehouse(tmp_path: Path) -> None:
    project = tmp_path / "project"  # the project's dbt files, where no warehouse was ever written
    for folder in ("models", "macros"):
        shutil.copytree(PACKAGE_PROJECT_DIR / folder, project / folder)
    for file in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(PACKAGE_PROJECT_DIR / file, project)
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("DBT_", "CDC_"))}
    run = subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), "build", "--profiles-dir", "."],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "does not have a target named 'run dbt as `cdc-dbt <command>` (e.g. cdc-dbt build)" in run.stdout
    assert not {"metastore_db", "spark-warehouse", "derby.log"} & {path.name for path in project.iterdir()}
