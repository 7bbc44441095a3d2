"""The whole-history aggregates built incrementally equal a full refresh: cdc_transactions (on
Delta recomputed whole by each build, from int_transaction_records, which each build appends to),
int_changes_aggregated_to_source_tables and int_changes_aggregated_to_columns (on Delta each build
adds the records it parsed to their counts and first and last times), and cdc_schema_drift, read
from the latter.

The demo's records (PostgreSQL with transaction metadata, MongoDB, Qlik Replicate with a table
version that adds a column) land in two batches, in a seeded random order, with the cases an
increment must get right held back on purpose: the BEGIN of every other PostgreSQL transaction
lands last, and its events and END carry the ids a real connector gives them (`txId:LSN` with
their own LSN, where the demo repeats the BEGIN's), so until the BEGIN lands they are rows of their
own, which it renames; the Qlik metadata lands last too (the data messages before it wait, then
are bound); the MongoDB collection lands whole first (its rows are untouched by the second build).
"""

import json
import random
from dataclasses import dataclass
from typing import Any

import pytest

from tests.integration.conftest import DEMO_LANDING, Build, DbtProject

pytestmark = pytest.mark.slow

SCHEMA = "incremental_aggregates"
SEED = 20261127
BATCHES = 2
AGGREGATES = (
    "cdc_transactions",
    "int_changes_aggregated_to_source_tables",
    "int_changes_aggregated_to_columns",
    "cdc_schema_drift",
)
ADDED_TO = ("int_changes_aggregated_to_source_tables", "int_changes_aggregated_to_columns")
"""The aggregates each build adds its records to (merged on Delta), each row with its `generation`."""
SELECTED = "+cdc_transactions +cdc_schema_drift +int_changes_aggregated_to_source_tables"
TRANSACTION_TOPIC = "dbserver1.transaction"
QLIK_METADATA_TOPIC = "qlik.metadata"
MONGODB_TOPIC = "mongo1.shop.reviews"
"""Lands whole in the first batch: its table's rows stay as the first build computed them."""


@dataclass(frozen=True)
class Builds:
    after_each_batch: list[dict[str, list[str]]]
    full_refresh: dict[str, list[str]]
    generations: dict[str, int]
    """Per aggregate added to, the distinct generations of its rows after the last incremental build."""


def is_held_back(transaction_id: str) -> bool:
    """Every other PostgreSQL transaction (by txId): its BEGIN lands last."""
    return int(transaction_id.split(":")[0]) % 2 == 0


def as_a_connector_names_it(record: dict[str, Any], position: int) -> dict[str, Any]:
    """The record with the transaction id Debezium's PostgreSQL connector gives an event or END of
    a held-back transaction: its txId with an LSN of its own, past the BEGIN's."""
    if not record["payload"] or not record["topic"].startswith("dbserver1."):
        return record
    message = json.loads(record["payload"])
    envelope = message["payload"]
    holder = envelope if record["topic"] == TRANSACTION_TOPIC else envelope.get("transaction")
    if not holder or not is_held_back(holder["id"]) or holder.get("status") == "BEGIN":
        return record
    tx_id, lsn = holder["id"].split(":")
    holder["id"] = f"{tx_id}:{int(lsn) + 1 + position}"
    return {**record, "payload": json.dumps(message)}


def batch_of(record: dict[str, Any], rng: random.Random) -> int:
    """The batch a record lands in: the held-back cases first, every other record at random."""
    if record["topic"] == MONGODB_TOPIC:
        return 0
    if record["topic"] == QLIK_METADATA_TOPIC:
        return BATCHES - 1
    if record["topic"] == TRANSACTION_TOPIC:
        marker = json.loads(record["payload"])["payload"]
        if marker["status"] == "BEGIN" and is_held_back(marker["id"]):
            return BATCHES - 1
    return rng.randrange(BATCHES)


def land_in_batches() -> list[list[str]]:
    """The demo's kcat lines, each batch's in a random order: one list of lines per batch."""
    rng = random.Random(SEED)
    batches: list[list[str]] = [[] for _ in range(BATCHES)]
    for path in sorted(DEMO_LANDING.rglob("*.json")):
        for position, line in enumerate(line for line in path.read_text().splitlines() if line.strip()):
            record = as_a_connector_names_it(json.loads(line), position)
            batches[batch_of(record, rng)].append(json.dumps(record))
    for lines in batches:
        rng.shuffle(lines)
    return batches


def snapshot(build: Build) -> dict[str, list[str]]:
    """Every row of each aggregate as sorted JSON text, `generation` left out (it says which
    build last changed a row, which differs between an increment and a full refresh by design)."""

    def text(row: dict[str, Any]) -> str:
        return json.dumps(
            {name: value for name, value in row.items() if name != "generation"}, sort_keys=True, default=str
        )

    return {table: sorted(text(row) for row in build.table(table)) for table in AGGREGATES}


@pytest.fixture(scope="module")
def builds(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Builds:
    landing = tmp_path_factory.mktemp("incremental_aggregates") / "landing"
    after_each_batch = []
    for number, lines in enumerate(land_in_batches()):
        batch_file = landing / f"batch-{number}" / "records.json"
        batch_file.parent.mkdir(parents=True)
        batch_file.write_text("".join(line + "\n" for line in lines))
        # The data tests (grain, accepted values) run once, on the last increment.
        build = dbt_project.build(landing, schema=SCHEMA, select=SELECTED, data_tests=number == BATCHES - 1)
        after_each_batch.append(snapshot(build))
    generations = {
        table: build.rows(f"select count(distinct generation) as n from `{{schema}}`.`{table}`")[0]["n"]
        for table in ADDED_TO
    }
    refreshed = dbt_project.build(landing, schema=SCHEMA, select=SELECTED, full_refresh=True, data_tests=False)
    return Builds(after_each_batch, snapshot(refreshed), generations)


def transaction_ids(tables: dict[str, list[str]]) -> set[str]:
    return {json.loads(row)["transaction_id"] for row in tables["cdc_transactions"]}


def test_each_aggregate_built_incrementally_equals_a_full_refresh(builds: Builds) -> None:
    last = builds.after_each_batch[-1]
    for table in AGGREGATES:
        assert last[table] == builds.full_refresh[table], table


def test_each_batch_changes_every_aggregate(builds: Builds) -> None:
    for before, after in zip(builds.after_each_batch, builds.after_each_batch[1:], strict=False):
        assert [table for table in AGGREGATES if before[table] == after[table]] == []


def test_a_late_begin_renames_its_transaction_and_the_old_rows_are_deleted(builds: Builds) -> None:
    first, last = builds.after_each_batch[0], builds.after_each_batch[-1]
    renamed = transaction_ids(first) - transaction_ids(last)
    assert renamed, "the held-back BEGINs rename transactions of the first build"
    assert renamed.isdisjoint(transaction_ids(builds.full_refresh))


def test_the_qlik_records_held_for_their_metadata_are_counted_once_bound(builds: Builds) -> None:
    def qlik_changes(tables: dict[str, list[str]]) -> int:
        rows = [json.loads(row) for row in tables["int_changes_aggregated_to_source_tables"]]
        return sum(row["change_count"] for row in rows if row["source_format"] == "qlik")

    assert qlik_changes(builds.after_each_batch[0]) == 0, "no Qlik data message is read before its metadata"
    assert qlik_changes(builds.after_each_batch[-1]) == qlik_changes(builds.full_refresh) > 0


def test_the_last_build_merged_only_what_its_records_touched(builds: Builds) -> None:
    """The rows of the MongoDB table and its columns, which the last batch did not touch, keep the
    generation of the first build."""
    assert {table: count > 1 for table, count in builds.generations.items()} == dict.fromkeys(builds.generations, True)
