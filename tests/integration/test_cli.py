"""`cdc-dbt` end to end, as a user runs it: a separate process, its own warehouse, JSON lines out."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from cdc_dbt.cli import run_sql
from cdc_dbt.generator import generate
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings
from tests.kcat import KafkaRecord, write_kcat_file

CLI = [sys.executable, "-m", "cdc_dbt.cli"]
SUMMARY = re.compile(
    r"cdc-dbt: this build parsed (\d+) new records: (\d+) changes to (\d+) tables,"
    r" (\d+) ignored \(tombstones, markers, metadata\), (\d+) quarantined\."
)


def cdc_dbt(args: list[str], landing: Path, warehouse: Path) -> subprocess.CompletedProcess[str]:
    """`cdc-dbt` as a user runs it: the product's own Spark configuration, not the suite's small-input one."""
    environment = {**os.environ, "CDC_LANDING_DIR": str(landing), "CDC_WAREHOUSE_DIR": str(warehouse)}
    for name in ("CDC_SCHEMA", "CDC_SHUFFLE_PARTITIONS", "SPARK_CONF_DIR"):
        environment.pop(name, None)
    return subprocess.run(
        [*CLI, *args], cwd=PACKAGE_PROJECT_DIR, env=environment, capture_output=True, text=True, timeout=900
    )


@pytest.mark.slow
def test_build_then_query_through_the_cli(tmp_path: Path) -> None:
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    expected_path = tmp_path / "expected.json"
    generate(landing / "generated", events=200, keys=50, seed=3, partitions=2, expected_path=expected_path)
    write_kcat_file(
        landing / "bad" / "records.jsonl",
        [KafkaRecord("dbserver1.inventory.customers", 9, 0, '{"id":1}', "{this is not json")],
    )
    (landing / "bad" / "records.jsonl").write_text((landing / "bad" / "records.jsonl").read_text() + "not a record\n")

    built = cdc_dbt(["build", "--target-path", str(tmp_path / "target")], landing, warehouse)
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
    expected = {table: rows for table, rows in json.loads(expected_path.read_text()).items() if rows}
    assert current == expected
    changed_tables = [row["source_table"] for row in rows if row["kind"] == "change"]
    assert (changes, tables) == (len(changed_tables), len(set(changed_tables))), "the build's summary line"
    assert sorted(row["reason"] for row in rows if row["kind"] == "quarantine") == [
        "invalid_json",
        "invalid_landing_line",
    ]
    assert (warehouse / "metastore_db").is_dir() and (warehouse / "tables").is_dir()
    assert landing.joinpath("bad", "records.jsonl").exists(), "dropping landing tables must keep the files"


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
