"""A build or run with nothing new is answered at once (cdc_dbt/up_to_date.py): what its stamp
records, what makes the next one run, and which commands remove it. No Spark: `run` here stands in
for dbt, writing a table file as a build would."""

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings, load_settings
from cdc_dbt.up_to_date import (
    STAMP_FILE,
    BuildStamp,
    input_fingerprint,
    is_read_only_statement,
    read_stamp,
    run_unless_up_to_date,
    write_stamp,
)
from cdc_dbt.up_to_date import files_fingerprint as files_digest


class StandIn:
    """dbt's place: counts its runs; each writes a new table file, as a build writes Parquet."""

    def __init__(self, settings: Settings, status: int = 0) -> None:
        self.settings, self.status, self.runs = settings, status, 0

    def __call__(self) -> int:
        self.runs += 1
        table = self.settings.tables_dir / "cdc.db" / "int_deliveries_loaded"
        table.mkdir(parents=True, exist_ok=True)
        (table / f"part-{self.runs:05}.parquet").write_bytes(b"rows")
        return self.status


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    project, landing = tmp_path / "project", tmp_path / "landing"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: shop\nmodel-paths: [models]\n")
    (project / "profiles.yml").write_text("cdc_dbt: {}\n")
    (project / "models" / "orders.sql").write_text("select 1 as id\n")
    landing.mkdir()
    (landing / "part-0.json").write_text('{"topic": "t", "partition": 0, "offset": 0}\n')
    (tmp_path / "elsewhere").mkdir()
    (landing / "linked").symlink_to(tmp_path / "elsewhere")
    return Settings(project, landing, tmp_path / "warehouse", None)


def run(settings: Settings, stand_in: Callable[[], int], *args: str, environ: dict[str, str] | None = None) -> int:
    arguments = list(args) or ["build"]
    command = next(arg for arg in arguments if not arg.startswith("-"))
    return run_unless_up_to_date(settings, command, arguments, environ or {}, stand_in)


def touch_later(path: Path) -> None:
    state = path.stat()
    os.utime(path, ns=(state.st_atime_ns, state.st_mtime_ns + 1_000_000_000))


def test_the_same_build_again_is_answered_without_running(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    dbt = StandIn(settings)
    assert run(settings, dbt) == 0
    assert read_stamp(settings.warehouse_dir) is not None
    assert run(settings, dbt) == 0
    assert dbt.runs == 1
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("cdc-dbt: nothing to build: no landed file, project file or table")


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda s: (s.landing_dir / "part-1.json").write_text("{}\n"), id="a new landed file"),
        pytest.param(lambda s: touch_later(s.landing_dir / "part-0.json"), id="a landed file rewritten"),
        pytest.param(lambda s: (s.landing_dir / "part-0.json").unlink(), id="a landed file removed"),
        pytest.param(
            lambda s: (s.landing_dir / "linked" / "part-2.json").write_text("{}\n"), id="a file in a linked folder"
        ),
        pytest.param(lambda s: (s.project_dir / "models" / "orders.sql").write_text("select 2 as id\n"), id="a model"),
        pytest.param(lambda s: (s.project_dir / "models" / "new.sql").write_text("select 1\n"), id="a new model"),
        pytest.param(lambda s: touch_later(s.project_dir / "dbt_project.yml"), id="dbt_project.yml"),
        pytest.param(lambda s: touch_later(s.project_dir / "profiles.yml"), id="the profile"),
        pytest.param(lambda s: (s.project_dir / "packages.yml").write_text("packages: []\n"), id="packages.yml"),
        pytest.param(lambda s: next(s.tables_dir.rglob("*.parquet")).write_bytes(b"other rows"), id="a table's file"),
        pytest.param(lambda s: next(s.tables_dir.rglob("*.parquet")).unlink(), id="a table's file removed"),
    ],
)
def test_a_change_to_what_the_build_read_or_wrote_runs_it_again(
    settings: Settings, change: Callable[[Settings], object]
) -> None:
    dbt = StandIn(settings)
    run(settings, dbt)
    change(settings)
    assert run(settings, dbt) == 0
    assert dbt.runs == 2
    run(settings, dbt)
    assert dbt.runs == 2, "recorded again: the next one is up to date"


def test_a_folder_named_in_dbt_project_yml_counts_and_others_do_not(settings: Settings) -> None:
    (settings.project_dir / "dbt_project.yml").write_text("name: shop\nmodel-paths: [models]\nmacro-paths: [lib]\n")
    (settings.project_dir / "lib").mkdir()
    (settings.project_dir / "notes").mkdir()
    dbt = StandIn(settings)
    run(settings, dbt)
    (settings.project_dir / "notes" / "todo.md").write_text("nothing dbt reads\n")
    run(settings, dbt)
    assert dbt.runs == 1
    (settings.project_dir / "lib" / "quoting.sql").write_text("{% macro q() %}{% endmacro %}\n")
    run(settings, dbt)
    assert dbt.runs == 2


def test_other_arguments_settings_or_dbt_variables_run_it(settings: Settings) -> None:
    dbt = StandIn(settings)
    run(settings, dbt, "build")
    run(settings, dbt, "build", "--select", "cdc_current")
    assert dbt.runs == 2
    run(settings, dbt, "run", "--select", "cdc_current")
    assert dbt.runs == 3
    run(settings, dbt, "run", "--select", "cdc_current", environ={"DBT_TARGET": "other"})
    assert dbt.runs == 4
    # What dbt prints is not what it builds.
    run(settings, dbt, "run", "--select", "cdc_current", environ={"DBT_TARGET": "other", "DBT_USE_COLORS": "false"})
    assert dbt.runs == 4
    other_schema = Settings(settings.project_dir, settings.landing_dir, settings.warehouse_dir, None, schema="shop")
    run(other_schema, dbt, "run", "--select", "cdc_current", environ={"DBT_TARGET": "other"})
    assert dbt.runs == 5


def test_a_full_refresh_always_runs_and_leaves_a_plain_build_up_to_date(settings: Settings) -> None:
    dbt = StandIn(settings)
    run(settings, dbt, "build", "--full-refresh")
    run(settings, dbt, "build", "--full-refresh")
    run(settings, dbt, "build", "-f")
    run(settings, dbt, "build", environ={"DBT_FULL_REFRESH": "true"})
    assert dbt.runs == 4
    run(settings, dbt, "build")
    assert dbt.runs == 4


def test_a_failed_build_leaves_no_stamp_and_the_next_one_runs(settings: Settings) -> None:
    run(settings, StandIn(settings))
    failing = StandIn(settings, status=1)
    failing.runs = 10  # writes a file of another name than the first build's
    (settings.landing_dir / "part-1.json").write_text("{}\n")
    assert run(settings, failing) == 1
    assert not (settings.warehouse_dir / STAMP_FILE).exists()
    dbt = StandIn(settings)
    dbt.runs = 20
    run(settings, dbt)
    assert dbt.runs == 21


@pytest.mark.parametrize(
    ("command", "keeps_the_stamp"),
    [
        (["test"], True),
        (["show", "--select", "cdc_current"], True),
        (["compile"], True),
        (["docs", "generate"], True),
        (["source", "freshness"], True),
        (["seed"], False),
        (["snapshot"], False),
        (["run-operation", "drop_everything"], False),
        (["retry"], False),
    ],
)
def test_commands_that_may_write_remove_the_stamp(
    settings: Settings, command: list[str], keeps_the_stamp: bool
) -> None:
    dbt = StandIn(settings)
    run(settings, dbt)
    run_unless_up_to_date(settings, command[0], command, {}, lambda: 0)
    assert (read_stamp(settings.warehouse_dir) is not None) == keeps_the_stamp


@pytest.mark.parametrize("value", ["false", "0", "no", " False "])
def test_cdc_skip_unchanged_false_always_runs(settings: Settings, value: str) -> None:
    dbt = StandIn(settings)
    run(settings, dbt, environ={"CDC_SKIP_UNCHANGED": value})
    run(settings, dbt, environ={"CDC_SKIP_UNCHANGED": value})
    assert dbt.runs == 2


@pytest.mark.parametrize("content", ["", "{not json", '{"command": ["build"]}', "[]"])
def test_an_unreadable_stamp_runs_the_build(settings: Settings, content: str) -> None:
    settings.warehouse_dir.mkdir()
    (settings.warehouse_dir / STAMP_FILE).write_text(content)
    dbt = StandIn(settings)
    run(settings, dbt)
    assert dbt.runs == 1


@pytest.mark.parametrize(
    ("statement", "reads_only"),
    [
        ("select count(*) from cdc.cdc_current", True),
        ("  SELECT 1", True),
        ("with t as (select 1) select * from t", True),
        ("-- how many\nselect 1", True),
        ("/* a report */ select 1", True),
        ("(select 1) union (select 2)", True),
        ("show tables in cdc", True),
        ("describe table extended cdc.cdc_current", True),
        ("explain select 1", True),
        ("drop view cdc.cdc_current", False),
        ("insert into cdc.int_deliveries_loaded select * from x", False),
        ("create or replace view cdc.cdc_current as select 1", False),
        ("alter table cdc.cdc_history set tblproperties ('a' = 'b')", False),
        ("set spark.sql.shuffle.partitions = 2", False),
        ("-- select\ndrop table x", False),
        ("/* select */ truncate table x", False),
        ("", False),
    ],
)
def test_which_sql_statements_only_read(statement: str, reads_only: bool) -> None:
    assert is_read_only_statement(statement) == reads_only


def test_the_fingerprint_of_folders_follows_names_sizes_and_times(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "x").write_text("1")
    before = files_digest([folder])
    assert files_digest([folder]) == before
    (folder / "a" / "x").rename(folder / "a" / "y")
    assert files_digest([folder]) != before
    assert files_digest([tmp_path / "missing"]) != files_digest([tmp_path / "also missing"])


def test_a_build_with_nothing_new_starts_no_java(tmp_path: Path) -> None:
    """The command as a user runs it, with no Java reachable: the answer needs none."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("CDC_", "DBT_"))}
    environment.update(
        PATH="/nonexistent", CDC_LANDING_DIR=str(tmp_path / "landing"), CDC_WAREHOUSE_DIR=str(tmp_path / "warehouse")
    )
    environment.pop("JAVA_HOME", None)
    (tmp_path / "landing").mkdir()
    (tmp_path / "landing" / "part-0.json").write_text("{}\n")
    settings = load_settings(environment, PACKAGE_PROJECT_DIR)
    settings.tables_dir.mkdir(parents=True)
    write_stamp(
        settings.warehouse_dir,
        BuildStamp(
            ["build"], input_fingerprint(settings, ["build"], environment), files_digest([settings.tables_dir]), "then"
        ),
    )

    def cdc_dbt_build() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cdc_dbt.cli", "build"],
            cwd=PACKAGE_PROJECT_DIR, env=environment, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    up_to_date = cdc_dbt_build()
    assert (up_to_date.returncode, up_to_date.stderr) == (0, "")
    assert up_to_date.stdout.startswith("cdc-dbt: nothing to build:") and "succeeded at then" in up_to_date.stdout
    # Something landed: the build must run, and without Java it cannot.
    (tmp_path / "landing" / "part-1.json").write_text("{}\n")
    must_build = cdc_dbt_build()
    assert must_build.returncode != 0 and "Java" in must_build.stderr, must_build.stderr


def test_a_variable_the_project_reads_with_env_var_counts_and_others_do_not(settings: Settings) -> None:
    (settings.project_dir / "models" / "orders.sql").write_text("select '{{ env_var('SHOP_REGION', 'eu') }}' as r\n")
    dbt = StandIn(settings)
    run(settings, dbt, environ={"SHOP_REGION": "eu", "UNRELATED": "1"})
    run(settings, dbt, environ={"SHOP_REGION": "eu", "UNRELATED": "2"})
    assert dbt.runs == 1
    run(settings, dbt, environ={"SHOP_REGION": "us", "UNRELATED": "2"})
    assert dbt.runs == 2


def test_a_build_that_leaves_records_waiting_for_the_registry_leaves_no_stamp(settings: Settings) -> None:
    """The Schema Registry's answer is an input no file shows: while records wait for it, the same
    build again runs, to retry them."""
    dbt = StandIn(settings)
    run_unless_up_to_date(settings, "build", ["build"], {}, dbt, records_wait=lambda: True)
    assert not (settings.warehouse_dir / STAMP_FILE).exists()
    run_unless_up_to_date(settings, "build", ["build"], {}, dbt, records_wait=lambda: False)
    assert dbt.runs == 2
    assert (settings.warehouse_dir / STAMP_FILE).exists()
    run_unless_up_to_date(settings, "build", ["build"], {}, dbt, records_wait=lambda: False)
    assert dbt.runs == 2
