"""What the table formats give (docs/table-formats.md): on Delta, the default, a table read as a past
build left it (time travel) and every table of the schema a Delta table; the rows as they were at a
source time from `cdc_history`'s windows (`cdc_rows_as_of`); and Parquet, the format for machines
without Maven Central, building the demo into exactly the tables Delta gives.

The time tests land one key's life in two builds (two files of one topic):

    build 1: id 1 created at 10:00 (balance 10), id 2 created at 11:00, id 1 updated at 12:00 (20)
    build 2: id 2 deleted at 13:00, id 1 updated at 14:00 (30)
"""

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.integration.conftest import DEMO_LANDING, Build, DbtProject, rows_query, table_rows
from tests.kcat import KafkaRecord, write_kcat_file

pytestmark = pytest.mark.spark

TOPIC = "pg1.public.accounts"
DAY = datetime(2024, 5, 6, tzinfo=UTC)


def change(offset: int, op: str, account: int, hour: int, balance: int | None) -> KafkaRecord:
    """A Debezium PostgreSQL change (no converter schema) of `public.accounts` at `hour` o'clock."""
    at_ms = int(DAY.replace(hour=hour).timestamp() * 1000)
    row = None if balance is None else {"id": account, "balance": balance}
    before = {"id": account, "balance": None} if op == "d" else None
    payload = {
        "before": before,
        "after": row,
        "source": {"connector": "postgresql", "name": "pg1", "db": "bank", "schema": "public",
                   "table": "accounts", "lsn": 100 * (offset + 1), "ts_ms": at_ms},
        "op": op,
        "ts_ms": at_ms,
    }  # fmt: skip
    return KafkaRecord(TOPIC, 0, offset, json.dumps({"id": account}), json.dumps(payload), at_ms)


FIRST_BUILD = [change(0, "c", 1, 10, 10), change(1, "c", 2, 11, 5), change(2, "u", 1, 12, 20)]
SECOND_BUILD = [change(3, "d", 2, 13, None), change(4, "u", 1, 14, 30)]


def balances(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {row["row_key"]: json.loads(row["row"])["balance"] for row in rows}


@pytest.fixture(scope="module")
def two_builds(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Both builds into one schema, with what cdc_current held after the first and the Delta
    version and commit time that build left."""
    landing = tmp_path_factory.mktemp("table-formats")
    write_kcat_file(landing / "first.jsonl", FIRST_BUILD)
    # The second build's data tests check the tables both builds wrote.
    build = dbt_project.build(landing, schema="table_formats", select="+cdc_current +cdc_history", data_tests=False)
    after_first = build.rows("select row_key, row from `{schema}`.cdc_current")
    first_commit = build.rows("describe history `{schema}`.cdc_current")[0]  # the newest first
    write_kcat_file(landing / "second.jsonl", SECOND_BUILD)
    dbt_project.build(landing, schema="table_formats", select="+cdc_current +cdc_history")
    yield {"build": build, "after_first": after_first, "first_commit": first_commit}


def test_time_travel_reads_cdc_current_as_the_first_build_left_it(two_builds: dict[str, Any]) -> None:
    build, first_commit = two_builds["build"], two_builds["first_commit"]
    assert balances(two_builds["after_first"]) == {'{"id":1}': 20, '{"id":2}': 5}
    assert balances(build.rows("select row_key, row from `{schema}`.cdc_current")) == {'{"id":1}': 30}
    version = first_commit["version"]
    by_version = build.rows(f"select row_key, row from `{{schema}}`.cdc_current version as of {version}")
    at_time = first_commit["timestamp"].strftime("%Y-%m-%d %H:%M:%S.%f")
    by_time = build.rows(f"select row_key, row from `{{schema}}`.cdc_current timestamp as of '{at_time}'")
    assert balances(by_version) == balances(by_time) == balances(two_builds["after_first"])


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        ("2024-05-06 09:59:59", {}),
        ("2024-05-06 10:00:00", {'{"id":1}': 10}),
        ("2024-05-06 11:30:00", {'{"id":1}': 10, '{"id":2}': 5}),
        ("2024-05-06 12:00:00", {'{"id":1}': 20, '{"id":2}': 5}),
        ("2024-05-06 13:00:00", {'{"id":1}': 20}),
        ("2024-05-06 23:00:00", {'{"id":1}': 30}),
    ],
)
def test_rows_as_of_a_source_time_follow_the_history_windows(
    two_builds: dict[str, Any], dbt_project: DbtProject, at: str, expected: dict[str, int]
) -> None:
    build = two_builds["build"]
    call = f"{{{{ cdc_rows_as_of('{at}', source_table='public.accounts') }}}}"
    query = dbt_project.compile_inline(call, build.schema)
    assert balances(build.rows(query)) == expected


def test_every_table_of_the_schema_is_a_delta_table(demo_build: Build) -> None:
    tables = [row for row in demo_build.rows("show tables in `{schema}`") if not row["isTemporary"]]
    providers = {}
    for table in tables:
        detail = demo_build.rows(f"describe table extended `{{schema}}`.`{table['tableName']}`")
        kind = {row["col_name"]: row["data_type"] for row in detail}
        if kind.get("Type") != "VIEW":
            providers[table["tableName"]] = kind.get("Provider")
    assert {"cdc_current", "cdc_history", "int_row_events_versioned"} <= set(providers)
    assert set(providers.values()) == {"delta"}, providers


@pytest.mark.slow
def test_parquet_builds_the_demo_into_the_tables_delta_gives(demo_build: Build, dbt_project: DbtProject) -> None:
    os.environ["CDC_TABLE_FORMAT"] = "parquet"
    try:
        # Its data tests would only repeat the demo build's: they read tables this test proves equal.
        parquet_build = dbt_project.build(DEMO_LANDING, schema="demo_parquet", example_marts=True, data_tests=False)
    finally:
        del os.environ["CDC_TABLE_FORMAT"]
    listed = parquet_build.rows("show tables in `{schema}`")
    tables = sorted(row["tableName"] for row in listed if not row["isTemporary"])
    built_on_delta = {row["tableName"] for row in demo_build.rows("show tables in `{schema}`")}
    assert "cdc_current" in tables and set(tables) <= built_on_delta, "other tests add marts to the demo's schema"
    providers = {row["data_type"] for row in parquet_build.rows("describe table extended `{schema}`.cdc_current")}
    assert "VIEW" in providers, "on Parquet, cdc_current is a view over the merge-on-read versions"
    assert table_rows(parquet_build.rows(rows_query("{schema}", set(tables)))) == table_rows(
        demo_build.rows(rows_query("{schema}", set(tables)))
    )
