"""`cdc-dbt` end to end, as a user runs it: a separate process, its own warehouse, JSON lines out."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cdc_dbt.cli import run_sql
from cdc_dbt.session import SPARK_CONF_DIR
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings
from cdc_dbt.spark_packages import TABLE_FORMAT_PACKAGES, unavailable_message
from generator import generate
from tests.kcat import KafkaRecord, write_kcat_file

CLI = [sys.executable, "-m", "cdc_dbt.cli"]
DELTA_PACKAGE = TABLE_FORMAT_PACKAGES["delta"]
SUMMARY = re.compile(
    r"cdc-dbt: this build parsed (\d+) new records: (\d+) changes to (\d+) tables,"
    r" (\d+) ignored \(tombstones, markers, metadata\), (\d+) quarantined\."
)


def user_environment(landing: Path, warehouse: Path) -> dict[str, str]:
    """A user's environment: the product's own Spark configuration, not the suite's small-input one."""
    environment = {**os.environ, "CDC_LANDING_DIR": str(landing), "CDC_WAREHOUSE_DIR": str(warehouse)}
    for name in ("CDC_SCHEMA", "CDC_SHUFFLE_PARTITIONS", "SPARK_CONF_DIR", "CDC_TABLE_FORMAT"):
        environment.pop(name, None)
    return environment


def cdc_dbt(args: list[str], landing: Path, warehouse: Path) -> subprocess.CompletedProcess[str]:
    """`cdc-dbt` as a user runs it."""
    return subprocess.run(
        [*CLI, *args],
        cwd=PACKAGE_PROJECT_DIR,
        env=user_environment(landing, warehouse),
        capture_output=True,
        text=True,
        timeout=900,
    )


@dataclass
class CliBuild:
    """A warehouse `cdc-dbt build` made in its own process, from a generated stream and two bad lines."""

    folder: Path
    built: subprocess.CompletedProcess[str]

    @property
    def landing(self) -> Path:
        return self.folder / "landing"

    @property
    def warehouse(self) -> Path:
        return self.folder / "warehouse"

    @property
    def target(self) -> Path:
        return self.folder / "target"

    def expected_current(self) -> dict[str, dict[str, object]]:
        """The generator's final state: each table's rows by key, tables with none left out."""
        expected = json.loads((self.folder / "expected.json").read_text())
        return {table: rows for table, rows in expected.items() if rows}


@pytest.fixture(scope="module")
def cli_build(tmp_path_factory: pytest.TempPathFactory) -> CliBuild:
    folder = tmp_path_factory.mktemp("cli")
    landing = folder / "landing"
    generate(landing / "generated", events=200, keys=50, seed=3, partitions=2, expected_path=folder / "expected.json")
    write_kcat_file(
        landing / "bad" / "records.jsonl",
        [KafkaRecord("dbserver1.inventory.customers", 9, 0, '{"id":1}', "{this is not json")],
    )
    (landing / "bad" / "records.jsonl").write_text((landing / "bad" / "records.jsonl").read_text() + "not a record\n")
    return CliBuild(folder, cdc_dbt(["build", "--target-path", str(folder / "target")], landing, folder / "warehouse"))


@pytest.mark.slow
def test_build_then_query_through_the_cli(cli_build: CliBuild) -> None:
    landing, warehouse, tmp_path, built = cli_build.landing, cli_build.warehouse, cli_build.folder, cli_build.built
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "Completed successfully" in built.stdout
    assert "\x1b[" not in built.stdout, "no colour codes when stdout is not a terminal"
    results = json.loads((tmp_path / "target" / "run_results.json").read_text())["results"]
    built_models = {
        result["unique_id"].removeprefix("model.cdc_dbt.")
        for result in results
        if result["unique_id"].startswith("model.")
    }
    assert any(result["unique_id"].startswith("test.") for result in results), "the data tests ran"
    assert not any(result["unique_id"].startswith("unit_test.") for result in results), "unit tests are CI's"
    assert {"cdc_changes", "cdc_current", "cdc_history", "cdc_quarantine"} <= built_models
    assert not built_models & {"customers_current", "orders_history"}, "the demo's typed marts are for the demo only"
    summary = [line.split("  ", 1)[-1] for line in built.stdout.splitlines() if "cdc-dbt: this build" in line]
    assert summary[1:] == [
        "[WARNING]: cdc-dbt: this build quarantined 2 records (1 invalid_json, 1 invalid_landing_line):"
        " see cdc.cdc_quarantine for each one, its reason and its text."
    ]
    counts = SUMMARY.fullmatch(summary[0])
    assert counts, summary[0]
    parsed, changes, tables, ignored, quarantined = map(int, counts.groups())
    assert (parsed, quarantined) == (changes + ignored + quarantined, 2)

    # Nothing landed since: the same build is answered at once, without Spark.
    again = cdc_dbt(["build", "--target-path", str(tmp_path / "target")], landing, warehouse)
    assert (again.returncode, again.stderr) == (0, "")
    assert again.stdout.startswith("cdc-dbt: nothing to build:") and len(again.stdout.splitlines()) == 1

    queried = cdc_dbt(
        [
            "sql",
            "select 'current' as kind, source_table, row_key, row, null as reason from cdc.cdc_current"
            " union all select 'quarantine', null, null, null, reason from cdc.cdc_quarantine"
            " union all select 'change', source_table, null, null, null from cdc.cdc_changes",
        ],
        landing,
        warehouse,
    )
    assert queried.returncode == 0, queried.stderr
    assert queried.stderr == "", "a query that succeeds says nothing on stderr, not even the JVM's start warning"
    rows = [json.loads(line) for line in queried.stdout.splitlines()]
    current: dict[str, dict[str, object]] = {}
    for row in rows:
        if row["kind"] == "current":
            current.setdefault(row["source_table"], {})[row["row_key"]] = json.loads(row["row"])
    assert current == cli_build.expected_current()
    changed_tables = [row["source_table"] for row in rows if row["kind"] == "change"]
    assert (changes, tables) == (len(changed_tables), len(set(changed_tables))), "the build's summary line"
    assert sorted(row["reason"] for row in rows if row["kind"] == "quarantine") == [
        "invalid_json",
        "invalid_landing_line",
    ]
    assert (warehouse / "metastore_db").is_dir() and (warehouse / "tables").is_dir()
    assert landing.joinpath("bad", "records.jsonl").exists(), "dropping landing tables must keep the files"


def read_by_path(table: Path, query: str) -> tuple[int, list[dict[str, Any]]]:
    """`query` of the Delta table at `table` (named `t` in it), read with delta-rs, no Spark and no
    lock (its DataFusion reader applies deletion vectors): the version read, and the rows."""
    import pyarrow
    from deltalake import DeltaTable, QueryBuilder

    delta_table = DeltaTable(str(table))
    rows = pyarrow.table(QueryBuilder().register("t", delta_table).execute(query).read_all()).to_pylist()
    return delta_table.version(), rows


def current_by_path(tables: Path) -> tuple[int, dict[str, dict[str, object]]]:
    """cdc_current's version and rows, by table and key."""
    version, rows = read_by_path(tables / "cdc_current", "select source_table, row_key, row from t")
    current: dict[str, dict[str, object]] = {}
    for row in rows:
        current.setdefault(row["source_table"], {})[row["row_key"]] = json.loads(row["row"])
    return version, current


@pytest.mark.slow
def test_readers_without_spark_see_the_last_committed_tables_while_a_build_rewrites_them(cli_build: CliBuild) -> None:
    """While `cdc-dbt run --full-refresh` holds the warehouse and replaces cdc_current,
    cdc_history and cdc_transactions, delta-rs reads cdc_current by path again and again: each read
    is a whole committed version, never a table half written or missing. DuckDB queries cdc_history
    through the same reader. Replacing the tables logs no error (Hive's, on the metastore's schema)."""
    import duckdb
    import pyarrow

    assert cli_build.built.returncode == 0, cli_build.built.stderr[-3000:]
    tables = cli_build.warehouse / "tables" / "cdc.db"
    expected = cli_build.expected_current()
    version_before, current = current_by_path(tables)
    assert current == expected
    output = cli_build.folder / "rebuild.log"  # a file: a pipe nobody reads until the end would fill and stop it
    rewrite = [
        "run", "--full-refresh", "--select", "cdc_current cdc_history cdc_transactions",
        "--target-path", str(cli_build.target),
    ]  # fmt: skip
    with output.open("w") as log:
        rebuild = subprocess.Popen(
            [*CLI, *rewrite],
            cwd=PACKAGE_PROJECT_DIR,
            env=user_environment(cli_build.landing, cli_build.warehouse),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        versions_read = []
        try:
            while rebuild.poll() is None:
                version, current = current_by_path(tables)
                assert current == expected, f"version {version} of cdc_current, read during the build"
                versions_read.append(version)
                time.sleep(0.2)
        finally:
            if rebuild.poll() is None:  # a read failed: stop the build, whose PID this test holds
                rebuild.kill()
                rebuild.wait()
    assert rebuild.returncode == 0, output.read_text()[-3000:]
    assert [line for line in output.read_text().splitlines() if " ERROR " in line] == []
    version_after, current = current_by_path(tables)
    assert current == expected and version_after > version_before
    assert len(versions_read) >= 10, "the reads ran during the build"

    _, history_rows = read_by_path(tables / "cdc_history", "select row_key, is_current from t")
    history = pyarrow.Table.from_pylist(history_rows)  # noqa: F841 - DuckDB reads it by name
    [(live_versions,)] = duckdb.sql("select count(*) from history where is_current").fetchall()
    assert live_versions == sum(len(rows) for rows in expected.values())


def test_without_maven_central_or_a_cached_jar_the_default_format_says_what_to_set(tmp_path: Path) -> None:
    """No Maven Central (every HTTP(S) request of the JVM goes to a closed loopback port) and an
    empty Ivy cache: a line naming the jar and the choice after the one saying it is fetched,
    nothing on stdout, no stack trace."""
    spark_conf = tmp_path / "spark-conf"
    spark_conf.mkdir()
    shutil.copy(SPARK_CONF_DIR / "log4j2.properties", spark_conf)
    (spark_conf / "spark-defaults.conf").write_text(f"spark.jars.ivy {tmp_path / 'empty-ivy-cache'}\n")
    (tmp_path / "warehouse" / "tables").mkdir(parents=True)
    no_network = " ".join(f"-D{scheme}.proxyHost=127.0.0.1 -D{scheme}.proxyPort=9" for scheme in ("http", "https"))
    environment = {
        **user_environment(tmp_path, tmp_path / "warehouse"),
        "SPARK_CONF_DIR": str(spark_conf),
        "JAVA_TOOL_OPTIONS": no_network,
        "XDG_CACHE_HOME": str(tmp_path / "empty-cache"),  # no listing of the jars fetched before
    }
    run = subprocess.run(
        [*CLI, "sql", "select 1"], cwd=PACKAGE_PROJECT_DIR, env=environment, capture_output=True, text=True, timeout=300
    )
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr.splitlines() == [
        f"cdc-dbt: fetching {DELTA_PACKAGE} for the delta table format (once) ...",
        f"cdc-dbt: {unavailable_message('the delta table format', [DELTA_PACKAGE], 'or set CDC_TABLE_FORMAT=parquet')}",
    ]


def test_sql_failure_is_one_line_on_stderr_and_a_nonzero_exit(
    spark: SparkSession, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    settings = Settings(PACKAGE_PROJECT_DIR, tmp_path, tmp_path, None)
    assert run_sql(settings, "select * from no_such_table") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("cdc-dbt sql: ") and "no_such_table" in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_sql_prints_one_json_object_per_row(
    spark: SparkSession, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    settings = Settings(PACKAGE_PROJECT_DIR, tmp_path, tmp_path, None)
    query = "select id, cast(id as decimal(5,2)) as price, date'2024-01-31' as day from range(2)"
    assert run_sql(settings, query) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"id": 0, "price": "0.00", "day": "2024-01-31"},
        {"id": 1, "price": "1.00", "day": "2024-01-31"},
    ]
