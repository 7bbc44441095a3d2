"""`CDC_TABLE_FORMAT=iceberg`: the demo built into Iceberg tables, half its records at first and the
rest incrementally, gives the core tables the Delta build of the whole demo gives, row for row;
the tables are Iceberg's (in its JDBC catalog, their files under the warehouse); and Iceberg's time
travel reads `cdc_current` as the first build left it.

Iceberg's catalog is set when a session starts (session.py), so the builds run in a `cdc-dbt`
process of their own, through the CLI as a user runs it, which then writes every row of the
tables compared to a file for this test to read.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from tests.integration.conftest import DEMO_LANDING, Build, rows_query, table_rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

CORE_TABLES = ("cdc_current", "cdc_history", "cdc_changes", "cdc_transactions")
LANDING_COLUMNS = ("landed_file", "landed_file_size", "landed_file_modified_at")
"""Where each record was landed: the files differ between the two landings, the records do not."""


def split_demo_landing(first: Path, rest: Path) -> None:
    """Each of the demo's landed files cut in two: its first half of lines under `first`, the rest under `rest`."""
    for landed in sorted(DEMO_LANDING.rglob("*.json")):
        lines = landed.read_text().splitlines(keepends=True)
        for folder, part, name in ((first, lines[: len(lines) // 2], "a"), (rest, lines[len(lines) // 2 :], "b")):
            (folder / landed.parent.name).mkdir(parents=True, exist_ok=True)
            (folder / landed.parent.name / f"{name}-{landed.name}").write_text("".join(part))


def build_on_iceberg(landing: str, rest: str, output: str) -> int:
    """In a process of its own: `cdc-dbt build` of `landing` (models only), then of `rest` added to it, on Iceberg;
    then every row of CORE_TABLES, the snapshot the first build left, and what it reads, to `output`."""
    from cdc_dbt.cli import main
    from cdc_dbt.session import ICEBERG_CATALOG, build_session
    from cdc_dbt.settings import load_settings

    # The first build's data tests are left out: the second's check the tables both builds wrote.
    build = ["build", "--exclude-resource-type", "unit_test"]
    if main([*build, "test"]) != 0:
        return 1
    spark = build_session(load_settings())
    [first] = spark.sql(
        f"select snapshot_id, (select count(*) from cdc.cdc_current) as current_rows"
        f" from {ICEBERG_CATALOG}.cdc.cdc_current.snapshots order by committed_at desc limit 1"
    ).collect()
    for folder in Path(rest).iterdir():
        shutil.copytree(folder, Path(landing) / folder.name, dirs_exist_ok=True)
    if main(build) != 0:
        return 1
    described = spark.sql("show table extended in cdc like 'cdc_current'").collect()
    result = {
        "rows": [row.asDict() for row in spark.sql(rows_query("cdc", set(CORE_TABLES))).collect()],
        "table_information": [row["information"] for row in described],
        "first_current_rows": first["current_rows"],
        "first_snapshot_rows": spark.sql(
            f"select count(*) as n from cdc.cdc_current version as of {first['snapshot_id']}"
        ).collect()[0]["n"],
    }
    Path(output).write_text(json.dumps(result))
    return 0


def without_landing_columns(tables: dict[str, list[str]]) -> dict[str, list[str]]:
    def trimmed(row: str) -> str:
        return json.dumps({k: v for k, v in json.loads(row).items() if k not in LANDING_COLUMNS}, sort_keys=True)

    return {table: sorted(trimmed(row) for row in rows) for table, rows in tables.items()}


@pytest.fixture(scope="module")
def iceberg_build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("iceberg")
    landing, rest, warehouse, output = folder / "landing", folder / "rest", folder / "warehouse", folder / "rows.json"
    split_demo_landing(landing, rest)
    environment = {
        **os.environ,
        "CDC_TABLE_FORMAT": "iceberg",
        "CDC_LANDING_DIR": str(landing),
        "CDC_WAREHOUSE_DIR": str(warehouse),
        "DBT_TARGET_PATH": str(folder / "target"),
        "DBT_LOG_PATH": str(folder / "logs"),
        "PYTHONPATH": str(PACKAGE_PROJECT_DIR),
    }
    environment.pop("CDC_SCHEMA", None)
    child = subprocess.run(
        [sys.executable, "-c", "import sys; from tests.integration.test_iceberg_tables import build_on_iceberg;"
         " sys.exit(build_on_iceberg(*sys.argv[1:]))", str(landing), str(rest), str(output)],
        cwd=PACKAGE_PROJECT_DIR, env=environment, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert child.returncode == 0, (child.stdout + child.stderr)[-5000:]
    return {"warehouse": warehouse, **json.loads(output.read_text())}


def test_built_half_then_the_rest_the_core_tables_equal_the_delta_build_of_the_whole(
    iceberg_build: dict[str, Any], demo_build: Build
) -> None:
    iceberg = without_landing_columns(table_rows(iceberg_build["rows"]))
    delta = without_landing_columns(table_rows(demo_build.rows(rows_query("{schema}", set(CORE_TABLES)))))
    assert {table: len(rows) for table, rows in iceberg.items()} == {table: len(rows) for table, rows in delta.items()}
    assert all(iceberg[table] for table in CORE_TABLES)
    assert iceberg == delta


def test_the_tables_are_iceberg_tables_in_the_warehouse(iceberg_build: dict[str, Any]) -> None:
    [information] = iceberg_build["table_information"]
    assert "Provider: iceberg" in information
    table_folder = iceberg_build["warehouse"] / "tables" / "iceberg" / "cdc" / "cdc_current"
    assert list((table_folder / "data").glob("*.parquet"))
    assert list((table_folder / "metadata").glob("*.metadata.json"))
    assert (iceberg_build["warehouse"] / "iceberg_catalog.sqlite").is_file()


def test_time_travel_reads_cdc_current_as_the_first_build_left_it(iceberg_build: dict[str, Any]) -> None:
    assert iceberg_build["first_current_rows"] > 0
    assert iceberg_build["first_snapshot_rows"] == iceberg_build["first_current_rows"]
    current_rows = len(table_rows(iceberg_build["rows"])["cdc_current"])
    assert current_rows != iceberg_build["first_current_rows"], "the rest of the demo changed the current state"
