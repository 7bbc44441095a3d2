"""Apache Flink's captured Debezium PostgreSQL and MySQL streams (../shared/corpus/flink-json).

The five files carry the same 16 events. PostgreSQL: with the converter schema, without it, and
as captured with the table's default REPLICA IDENTITY (updates without before image; the delete
without any image, so its key can only come from the Kafka key). MySQL: with the converter schema
and without it (ordered by their binlog `file`, `pos` and `row`, which agree with the capture's
order; the snapshot's reads share `mysql-bin.000003` at 154). Each is wrapped as kcat records
in one partition of its own topic, keyed `{"id": ...}` from the row, and must give the final state
Flink's changelog implies; the PostgreSQL streams also every SCD2 version derived from it (its
validity times are PostgreSQL's).

All five land in one build, with other modules' files (conftest.py's combined_build): each
stream's `source.db` is renamed after the stream, so the same table and keys in five databases
must stay five independent sets of rows.
"""

import json
import struct

import pytest

from tests.corpus import corpus_lines
from tests.integration.conftest import Build
from tests.integration.corpus_tables import CorpusTables, corpus_tables
from tests.kcat import KafkaRecord

POSTGRES_STREAMS = {
    "schema_include": "debezium-postgres-data-schema-include.txt",
    "schema_exclude": "debezium-postgres-data-schema-exclude.txt",
    "replica_identity": "debezium-postgres-data-replica-identity.txt",
}
MYSQL_STREAMS = {
    "mysql_schema_include": "debezium-data-schema-include.txt",
    "mysql_schema_exclude": "debezium-data-schema-exclude.txt",
}
STREAMS = POSTGRES_STREAMS | MYSQL_STREAMS


def row_ids() -> list[int]:
    """The id of every event, from the stream whose images always carry it."""
    ids = []
    for line in corpus_lines("flink-json", STREAMS["schema_exclude"]):
        event = json.loads(line)
        ids.append((event["after"] or event["before"])["id"])
    return ids


def expected_rows(name: str) -> list[dict[str, str]]:
    """Rows of a `|`-separated expected file; its header is the first data line or a `# Format:` comment."""
    lines = corpus_lines("flink-json", "expected", name)
    formats = [line.removeprefix("# Format:").strip() for line in lines if line.startswith("# Format:")]
    data = [line for line in lines if not line.startswith("#")]
    header, *rows = [line.split("|") for line in formats + data]
    return [dict(zip(header, row, strict=True)) for row in rows]


def product(row_json: str) -> tuple[int, str, str, float]:
    row = json.loads(row_json)
    return row["id"], row["name"], row["description"], row["weight"]


def expected_product(row: dict[str, str]) -> tuple[int, str, str, float]:
    return int(row["id"]), row["name"], row["description"], float(row["weight"])


def in_database(line: str, database: str) -> str:
    """The event with `source.db` renamed, with or without the converter's schema wrapper."""
    message = json.loads(line)
    envelope = message["payload"] if "schema" in message else message
    envelope["source"]["db"] = database
    return json.dumps(message)


def landing_files() -> dict[str, list[KafkaRecord]]:
    """Each stream's records, by kcat file name."""
    return {
        f"{stream}.json": [
            KafkaRecord(
                f"{stream}.inventory.products", 0, offset, json.dumps({"id": row_id}), in_database(line, stream)
            )
            for offset, (row_id, line) in enumerate(zip(row_ids(), corpus_lines("flink-json", file_name), strict=True))
        ]
        for stream, file_name in STREAMS.items()
    }


@pytest.fixture(scope="module")
def tables(combined_build: Build) -> CorpusTables:
    landing_files()  # skips where ../shared/corpus is absent: the build then holds none of it
    return corpus_tables(combined_build, {f"{stream}.inventory.products" for stream in STREAMS})


@pytest.fixture(params=list(STREAMS))
def stream(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def source_table(stream: str) -> str:
    """PostgreSQL names `<schema>.<table>`; MySQL has no schema and names `<db>.<table>`."""
    return f"{stream}.products" if stream in MYSQL_STREAMS else "inventory.products"


def as_float32(weight: float) -> float:
    """MySQL's `weight` is a FLOAT: Debezium writes the 32-bit value widened (3.140000104904175),
    Flink prints it as the 32-bit float it is (3.14). Both sides compare as 32-bit floats."""
    return float(struct.unpack("f", struct.pack("f", weight))[0])


def test_every_event_becomes_a_change(tables: CorpusTables, stream: str) -> None:
    changes = [change for change in tables.changes if change["source_db"] == stream]
    assert len(changes) == 16
    assert {change["source_table"] for change in changes} == {source_table(stream)}
    assert tables.quarantine == []


def test_current_state_is_flinks_final_state(tables: CorpusTables, stream: str) -> None:
    actual = [product(row["row"]) for row in tables.current_of(stream)]
    expected = [expected_product(row) for row in expected_rows("debezium-expected-final-state.txt")]
    if stream in MYSQL_STREAMS:
        actual = [(*values, as_float32(weight)) for *values, weight in actual]
        expected = [(*values, as_float32(weight)) for *values, weight in expected]
    assert sorted(actual) == sorted(expected)


@pytest.mark.parametrize("stream", list(POSTGRES_STREAMS))
def test_history_holds_every_derived_scd2_version(tables: CorpusTables, stream: str) -> None:
    actual = {
        (*product(version["row"]), version["valid_from_ms"], version["valid_to_ms"], version["is_current"])
        for version in tables.history_of(stream)
    }
    expected = {
        (
            *expected_product(row),
            int(row["valid_from_ts_ms"]),
            int(row["valid_to_ts_ms"]) if row["valid_to_ts_ms"] else None,
            row["is_current"] == "true",
        )
        for row in expected_rows("debezium-postgres-derived-scd2.txt")
    }
    assert actual == expected


def test_deleted_row_has_no_current_version_and_ends_by_delete(tables: CorpusTables, stream: str) -> None:
    versions = [version for version in tables.history_of(stream) if version["row_key"] == '{"id":111}']
    assert [(v["version"], v["ended_by"], v["is_current"]) for v in versions] == [(1, "u", False), (2, "d", False)]
