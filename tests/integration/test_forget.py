"""`cdc-dbt forget`: a row's every trace erased, and withheld from every later build.

The demo's landing (Debezium with transaction metadata, Qlik, MongoDB), plus a quarantined record
of a customer, built with the demo's typed marts kept as tables. Two customers are forgotten in
one command: 1020, live with eight versions, and 1022, deleted, whose delete was followed by a
tombstone. Then:

- nothing of either is left in any table or view: not a value of their rows, not their Kafka
  key, not a record of theirs; and every other row of every table is as it was (the transactions
  they were part of stay complete);
- the command says what it removed from each table and names the landed files holding them, and
  the erasure list holds each customer's records under that customer's erasure;
- a record of 1020 landing after the forget, and every record of both on a `--full-refresh`, are
  withheld, while a new record of another customer lands; incremental and full builds agree;
- bad input is a one-line message and exit status 2, and a batch with one key to refuse erases
  nothing.
"""

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cdc_dbt.forget import ERASURES
from cdc_dbt.forget import main as forget_main
from cdc_dbt.settings import Settings
from tests.integration.conftest import (
    DEMO_LANDING,
    Build,
    DbtProject,
    copy_of_project,
    rows_query,
    table_rows,
)
from tests.kcat import KafkaRecord, write_kcat_file

SCHEMA = "forget"
TOPIC = "dbserver1.inventory.customers"
SOURCE_TABLE = "inventory.customers"
FORGOTTEN = {1020: '{"id": 1020}', 1022: '{ "id" : 1022 }'}
"""The customers forgotten, each key as a user may type it."""
ROW_KEYS = {f'{{"id":{customer}}}' for customer in FORGOTTEN}
CUSTOMER_MARTS = ("customers_current", "customers_history")
AGGREGATES = {
    "cdc_reconciliation",
    "cdc_topic_health",
    "cdc_schema_drift",
    "int_changes_aggregated_to_source_tables",
    "int_changes_aggregated_to_columns",
}
"""Counts per topic, table or column: their customers' rows change, every other row must not."""
ERASURE_LIST = {ERASURES, "stg_warehouse__erasures"}
LANDED_FILE_VIEWS = {"stg_kafka__kcat_lines", "stg_kafka__parquet_records"}
"""Views of the landed files as they are: the records are there until their owner rewrites the
files the command names."""
LATE_OFFSET, OTHER_OFFSET, BAD_OFFSET = 900_001, 900_002, 900_000
"""Records this test lands beside the demo's, at offsets the demo's partitions never reach."""


def demo_customer_records() -> list[tuple[Path, dict[str, Any]]]:
    """The demo's records of inventory.customers, with the file each is in."""
    records = []
    for path in sorted((DEMO_LANDING / TOPIC).glob("*.json")):
        records += [(path, json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
    return records


def customer_of(record: dict[str, Any]) -> int:
    return int(json.loads(record["key"])["payload"]["id"])


def row_values(record: dict[str, Any]) -> set[str]:
    """The text values of a change's row images (names, e-mail addresses)."""
    if record["payload"] is None:
        return set()
    envelope = json.loads(record["payload"])["payload"]
    images = [envelope.get("before") or {}, envelope.get("after") or {}]
    return {value for image in images for value in image.values() if isinstance(value, str) and len(value) > 3}


def traces() -> set[str]:
    """Values only the forgotten customers' rows hold: none may be left in any table."""
    records = [record for _, record in demo_customer_records()]
    theirs = set().union(*(row_values(r) for r in records if customer_of(r) in FORGOTTEN))
    others = set().union(*(row_values(r) for r in records if customer_of(r) not in FORGOTTEN))
    found = theirs - others
    assert len(found) >= 4, "the demo's forgotten customers have values of their own"
    return found


def raw_keys() -> dict[int, str]:
    """Each forgotten customer's Kafka key, as landed."""
    return {
        customer_of(record): record["key"] for _, record in demo_customer_records() if customer_of(record) in FORGOTTEN
    }


def snapshot(build: Build) -> dict[str, list[str]]:
    """Every row of every table and view of the schema (rows_query), by table."""
    tables = {row["tableName"] for row in build.rows("show tables in `{schema}`") if not row["isTemporary"]}
    rows = table_rows(build.rows(rows_query("{schema}", tables)))
    return {table: rows.get(table, []) for table in tables}


@dataclass
class Forgotten:
    landing: Path
    settings: Settings
    before: dict[str, list[str]]
    after: dict[str, list[str]]
    output: str
    files_before: dict[str, list[str]]
    """Every row of every data file of every table folder of the schema before the forgets, by
    table folder (data_file_rows)."""
    files_after: dict[str, list[str]]
    """The same right after the forgets: what time travel or a reader of the files could still reach."""
    incremental: dict[str, list[str]]
    full_refresh: dict[str, list[str]]


def forget(settings: Settings, *args: str) -> tuple[int, str, str]:
    """`cdc-dbt forget ...` in this process: its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = forget_main(list(args), settings)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def forgotten(
    dbt_project: DbtProject, session_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Forgotten:
    folder = tmp_path_factory.mktemp("forget")
    landing = folder / "landing"
    shutil.copytree(DEMO_LANDING, landing)
    keys = raw_keys()
    # A record of 1020 the build quarantines (its payload is no JSON): its raw key and bytes are a trace too.
    write_kcat_file(landing / "bad" / "customers.jsonl", [KafkaRecord(TOPIC, 0, BAD_OFFSET, keys[1020], "{not json")])
    # The demo's typed marts, kept as tables (a consumer's choice): forget erases their rows too.
    project = copy_of_project(folder / "project")
    config = (project / "dbt_project.yml").read_text()
    enabled = "        +enabled: \"{{ var('example_marts', false) }}\"\n"
    assert enabled in config
    (project / "dbt_project.yml").write_text(config.replace(enabled, enabled + "        +materialized: table\n"))

    def build(**options: Any) -> Build:
        return dbt_project.build(landing, schema=SCHEMA, example_marts=True, project_dir=project, **options)

    before = snapshot(build(data_tests=False))
    built_target = dbt_project.last_target  # its manifest says which typed marts are tables
    files_before = data_file_rows(session_settings.warehouse_dir / "tables" / f"{SCHEMA}.db")
    settings = Settings(project, landing, session_settings.warehouse_dir, None, schema=SCHEMA)
    status, output, err = forget(settings, SOURCE_TABLE, *FORGOTTEN.values(), "--target-path", str(built_target))
    assert (status, err) == (0, ""), err
    after = snapshot(Build(dbt_project.spark, SCHEMA))
    files_after = data_file_rows(session_settings.warehouse_dir / "tables" / f"{SCHEMA}.db")

    # Landed after the forget: an update of 1020 (the source re-sent it) and another customer's.
    late = [record for _, record in demo_customer_records() if customer_of(record) == 1020][-1]
    other = [record for _, record in demo_customer_records() if customer_of(record) == 1021][-1]
    write_kcat_file(
        landing / "late" / "customers.jsonl",
        [
            KafkaRecord(TOPIC, 0, LATE_OFFSET, late["key"], late["payload"]),
            KafkaRecord(TOPIC, 0, OTHER_OFFSET, other["key"], other["payload"]),
        ],
    )
    incremental = snapshot(build())
    full_refresh = snapshot(build(full_refresh=True, data_tests=False))
    return Forgotten(landing, settings, before, after, output, files_before, files_after, incremental, full_refresh)


def data_file_rows(schema_folder: Path) -> dict[str, list[str]]:
    """Each row of each Parquet data file under the schema's table folders (the Delta log left out),
    as JSON text, read with pyarrow: the files as they are, whichever version reads them."""
    import pyarrow.parquet as pq

    rows: dict[str, list[str]] = {}
    for data_file in sorted(schema_folder.glob("*/**/*.parquet")):
        relative = data_file.relative_to(schema_folder)
        if "_delta_log" in relative.parts:
            continue
        table = pq.read_table(data_file)
        rows.setdefault(relative.parts[0], []).extend(
            json.dumps(row, default=str, sort_keys=True) for row in table.to_pylist()
        )
    return rows


def is_of_the_forgotten(table: str, row_json: str, erased: set[tuple[Any, ...]]) -> bool:
    row = json.loads(row_json)
    if row.get("row_key") in ROW_KEYS and (row.get("source_table") == SOURCE_TABLE or table in CUSTOMER_MARTS):
        return True
    return (row.get("topic"), row.get("partition"), row.get("offset")) in erased


def erased_records(tables: dict[str, list[str]]) -> set[tuple[Any, ...]]:
    rows = [json.loads(row) for row in tables[ERASURES]]  # to_json leaves null columns out
    return {(row["topic"], row["partition"], row["offset"]) for row in rows if "offset" in row}


def assert_no_trace(tables: dict[str, list[str]]) -> None:
    values, keys = traces(), set(raw_keys().values())
    for table, rows in tables.items():
        if table in LANDED_FILE_VIEWS:
            continue
        for row_json in rows:
            row = json.loads(row_json)
            assert not (row.get("row_key") in ROW_KEYS and row.get("source_table") == SOURCE_TABLE), (table, row)
            assert not (table in CUSTOMER_MARTS and row.get("row_key") in ROW_KEYS), (table, row)
            assert row.get("key") not in keys, (table, row)
            assert [value for value in values if holds(row_json, value)] == [], (table, row)


def holds(row_json: str, value: str) -> bool:
    """Whether a row of table_rows holds `value`, in a column or in JSON text in one (a payload)."""
    return json.dumps(value)[1:-1] in row_json or json.dumps(json.dumps(value)[1:-1])[1:-1] in row_json


def test_the_forgotten_rows_were_there_before(forgotten: Forgotten) -> None:
    """The check below finds what it looks for: every trace is in the tables before the forget."""
    rows = [row for table in forgotten.before.values() for row in table]
    assert [value for value in traces() if not any(holds(row, value) for row in rows)] == []
    current = [json.loads(row)["row_key"] for row in forgotten.before["cdc_current"]]
    assert '{"id":1020}' in current and '{"id":1022}' not in current
    in_files = [row for rows in forgotten.files_before.values() for row in rows]
    assert [value for value in traces() if not any(holds(row, value) for row in in_files)] == []
    quarantined = [json.loads(row) for row in forgotten.before["cdc_quarantine"]]
    assert [row["offset"] for row in quarantined if row["topic"] == TOPIC] == [BAD_OFFSET]


def test_no_trace_is_left_in_any_table(forgotten: Forgotten) -> None:
    assert_no_trace(forgotten.after)
    assert forgotten.after["customers_current"], "the typed marts are tables, and keep the other customers"


def test_no_file_of_any_table_holds_a_trace(forgotten: Forgotten) -> None:
    """The purge: no data file left in the tables' folders, read by any version or any reader of
    the files, holds the forgotten rows (an unpurged table's older files would)."""
    files = forgotten.files_after
    assert {"cdc_current", "cdc_history", "int_deliveries_loaded", "customers_current"} <= set(files)
    values, keys = traces(), set(raw_keys().values())
    for table, rows in files.items():
        for row_json in rows:
            assert [value for value in [*values, *keys] if holds(row_json, value)] == [], (table, row_json[:300])


def test_every_other_row_of_every_table_is_as_it_was(forgotten: Forgotten) -> None:
    before, after = forgotten.before, forgotten.after
    erased = erased_records(after)
    assert set(after) == set(before)
    for table in set(before) - ERASURE_LIST:
        removed = Counter(before[table]) - Counter(after[table])
        added = Counter(after[table]) - Counter(before[table])
        if table in AGGREGATES:
            # Their rows of the customers' topic or table count fewer records; no other row moves.
            for row_json in [*removed, *added]:
                row = json.loads(row_json)
                assert row.get("topic") == TOPIC or row.get("source_table") == SOURCE_TABLE, (table, row)
            continue
        assert added == Counter(), table
        assert [row for row in removed if not is_of_the_forgotten(table, row, erased)] == [], table
    reconciliation = [json.loads(row) for row in after["cdc_reconciliation"]]
    assert {row["unaccounted"] for row in reconciliation} == {0}


def test_the_output_says_what_it_removed_and_which_landed_files_hold_the_bytes(forgotten: Forgotten) -> None:
    lines = forgotten.output.splitlines()
    assert [line.split(", erasure ")[0] for line in lines[:2]] == [
        f'cdc-dbt forget: erased {SOURCE_TABLE} {{"id":{customer}}} (source database inventory_db)'
        for customer in FORGOTTEN
    ]
    assert lines[2] == "cdc-dbt forget: removed, the 2 rows together:"
    removed = {
        line.split()[0]: int(line.split()[-3])
        for line in lines[3 : lines.index(next(line for line in lines if "withheld" in line))]
    }
    files = {line.strip() for line in lines[lines.index(next(line for line in lines if "landed files" in line)) + 1 :]}
    holding = {
        str(forgotten.landing / path.relative_to(DEMO_LANDING))
        for path, record in demo_customer_records()
        if customer_of(record) in FORGOTTEN
    }
    assert files == holding | {str(forgotten.landing / "bad" / "customers.jsonl")}
    gone = {
        table: sum((Counter(forgotten.before[table]) - Counter(forgotten.after[table])).values())
        for table in forgotten.before
        if table not in AGGREGATES | ERASURE_LIST
    }
    assert {table: gone[table] for table in removed} == removed
    # The other views over them follow without being counted.
    assert {table for table, rows in gone.items() if rows} - set(removed) == {
        "int_records_parsed",
        "cdc_current_with_deleted",
        "cdc_current_consistent",
    }
    for table in ("int_deliveries_loaded", "int_records_parsed_unbound", "cdc_history", "cdc_current", "cdc_changes"):
        assert removed[table] > 0, table
    assert removed["customers_current"] == 1 and removed["customers_history"] > 1


def test_each_customer_has_an_erasure_of_its_own_with_its_records(forgotten: Forgotten) -> None:
    """One command, one erasure per row: its id (printed) lists that row's records and Kafka key,
    so one row's key can be let in again without the other's."""
    printed = {
        int(json.loads(line.split()[4])["id"]): line.rsplit(" ", 1)[-1]
        for line in forgotten.output.splitlines()
        if line.startswith("cdc-dbt forget: erased ")
    }
    listed = [json.loads(row) for row in forgotten.after[ERASURES]]
    assert {row["erasure_id"] for row in listed} == set(printed.values())
    for customer, erasure_id in printed.items():
        of_erasure = [row for row in listed if row["erasure_id"] == erasure_id]
        records = {(row["partition"], row["offset"]) for row in of_erasure if "offset" in row}
        landed = {
            (record["partition"], record["offset"])
            for _, record in demo_customer_records()
            if customer_of(record) == customer
        }
        assert records == landed | ({(0, BAD_OFFSET)} if customer == 1020 else set()), customer
        fingerprints = {row["kafka_key_sha256"] for row in of_erasure if "kafka_key_sha256" in row}
        assert fingerprints == {hashlib.sha256(f"{TOPIC}\0{raw_keys()[customer]}".encode()).hexdigest()}


def test_the_erasure_list_holds_positions_and_fingerprints_never_the_key(forgotten: Forgotten) -> None:
    rows = [json.loads(row) for row in forgotten.after[ERASURES]]
    kept = {str(value) for row in rows for value in row.values()}
    assert not kept & {*ROW_KEYS, *raw_keys().values()}
    assert not [value for value in traces() if any(value in text for text in kept)]
    fingerprints = {row["kafka_key_sha256"] for row in rows if "kafka_key_sha256" in row}
    assert fingerprints == {hashlib.sha256(f"{TOPIC}\0{key}".encode()).hexdigest() for key in raw_keys().values()}
    assert {(TOPIC, 0, BAD_OFFSET)} <= erased_records(forgotten.after)


def test_later_builds_incremental_and_full_bring_nothing_back(forgotten: Forgotten) -> None:
    assert_no_trace(forgotten.incremental)
    assert_no_trace(forgotten.full_refresh)
    changes = [json.loads(row) for row in forgotten.incremental["cdc_changes"]]
    offsets = {row["offset"] for row in changes if row["topic"] == TOPIC}
    assert OTHER_OFFSET in offsets, "a record of another customer landed after the forget is built"
    assert LATE_OFFSET not in offsets
    assert forgotten.full_refresh == forgotten.incremental


def test_a_row_forgotten_again_or_never_landed_is_a_clear_mistake_and_its_batch_erases_nothing(
    forgotten: Forgotten, dbt_project: DbtProject
) -> None:
    status, out, err = forget(forgotten.settings, SOURCE_TABLE, '{"id": 1001}', FORGOTTEN[1020])
    assert (status, out) == (2, "")
    assert err == (
        'cdc-dbt forget: no row of inventory.customers has the key {"id":1020} (nothing to forget; a key is'
        " compared as cdc_current.row_key writes it: the key columns by their source names)\n"
    )
    current = Build(dbt_project.spark, SCHEMA).rows(
        "select row_key from `{schema}`.cdc_current where source_table = 'inventory.customers'"
    )
    assert {"row_key": '{"id":1001}'} in current, "the batch's other row is still there"


def test_an_unknown_source_table_is_a_clear_mistake(forgotten: Forgotten) -> None:
    status, out, err = forget(forgotten.settings, "inventory.customer", '{"id": 1001}')
    assert (status, out) == (2, "")
    assert err.startswith("cdc-dbt forget: no source table inventory.customer in the warehouse; its tables: ")
    assert "inventory.customers (source database inventory_db)" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["inventory.customers", "{id: 1001}"], "the key '{id: 1001}' is not a JSON object of the row's key columns"),
        (["inventory.customers", "1001"], "the key '1001' is not a JSON object of the row's key columns"),
        (["inventory.customers"], "the following arguments are required: row_key"),
        (["inventory.customers", "{}"], "the key '{}' is not a JSON object"),
        (["inventory.customers", '{"id": 1}', "1002"], "the key '1002' is not a JSON object"),
        (["inventory.customers", '{"id": 1}', "--force"], "unexpected --force"),
    ],
)
def test_bad_arguments_are_one_line_before_spark(args: list[str], message: str, tmp_path: Path) -> None:
    status, out, err = forget(Settings(tmp_path, tmp_path, tmp_path / "no-warehouse", None), *args)
    assert (status, out) == (2, "")
    assert err.startswith(f"cdc-dbt forget: {message}") and len(err.splitlines()) == 1, err


@pytest.mark.parametrize(
    ("table_format", "reason"),
    [("parquet", "Parquet has no DELETE"), ("iceberg", "its purge of the files that still hold the rows")],
)
def test_a_format_without_its_purge_is_refused_with_what_to_do(table_format: str, reason: str, tmp_path: Path) -> None:
    settings = Settings(tmp_path, tmp_path, tmp_path, None, table_format=table_format)
    status, out, err = forget(settings, "inventory.customers", '{"id": 1001}')
    assert (status, out) == (2, "")
    assert err.startswith(
        f"cdc-dbt forget: forget needs Delta tables (CDC_TABLE_FORMAT=delta) and this warehouse is {table_format}:"
        f" {reason}"
    )
    assert len(err.splitlines()) == 1


def test_the_models_unit_tests_withhold_and_count_the_erased_records(
    forgotten: Forgotten, dbt_project: DbtProject
) -> None:
    """The dbt unit tests of the SQL forget relies on: int_deliveries_loaded withholds by identity
    and by Kafka key fingerprint (as Python computes it), cdc_transactions counts erased changes."""
    from dbt.cli.main import dbtRunner

    selection = "test_type:unit,int_deliveries_loaded test_type:unit,cdc_transactions"
    project_args = dbt_project._project_args(
        forgotten.landing, SCHEMA, {"example_marts": True}, forgotten.settings.project_dir
    )
    result = dbtRunner().invoke(["test", "--select", selection, *project_args])
    assert result.success, result.exception or [str(node.message) for node in result.result or []]
    names = sorted(node.node.name for node in result.result if node.node.resource_type == "unit_test")
    assert names == [
        "cdc_transactions_counts_qlik_events_by_their_number_within_the_transaction",
        "cdc_transactions_pairs_postgresql_begin_and_end_by_txid",
        "cdc_transactions_still_count_the_changes_cdc_dbt_forget_erased",
        "int_deliveries_loaded_withholds_the_records_cdc_dbt_forget_erased",
    ]


@pytest.mark.parametrize(
    ("key", "stdin", "named"),
    [
        ("{id: 1001", None, "'{id: 1001'"),
        # `-`: the keys of a batch from standard input, one a line; a bad one is named by its line.
        ("-", '{"id": 1001}\n{"id": 1002}\n1003\n', "'1003' (line 3 of standard input)"),
    ],
)
def test_the_command_line_says_a_bad_key_in_one_line_without_starting_spark(
    key: str, stdin: str | None, named: str, tmp_path: Path
) -> None:
    """`cdc-dbt forget` as a user runs it (a separate process; nothing to start for a mistake)."""
    environment = {**os.environ, "CDC_WAREHOUSE_DIR": str(tmp_path / "warehouse"), "CDC_LANDING_DIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "cdc_dbt.cli", "forget", "inventory.customers", key],
        input=stdin,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.splitlines() == [
        f"cdc-dbt forget: the key {named} is not a JSON object of the row's key columns,"
        " e.g. '{\"id\": 1004}' (as cdc_current.row_key shows it)"
    ]
    assert not (tmp_path / "warehouse").exists()
