"""Apache Flink's captured Debezium PostgreSQL streams (../shared/corpus/flink-json).

The three files carry the same 16 events: with the converter schema, without it, and as captured
with the table's default REPLICA IDENTITY (updates without before image; the delete without any
image, so its key can only come from the Kafka key). Each is wrapped as kcat records in one
partition of its own topic, keyed `{"id": ...}` from the row, and must give the final state
Flink's changelog implies and every SCD2 version derived from it.

All three land in one build: each stream's `source.db` is renamed after the stream, so the same
table and keys in three databases must stay three independent sets of rows (SPEC §6).
"""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import corpus_lines
from tests.integration.conftest import Build, DbtProject
from tests.kcat import KafkaRecord, write_kcat_file

STREAMS = {
    "schema_include": "debezium-postgres-data-schema-include.txt",
    "schema_exclude": "debezium-postgres-data-schema-exclude.txt",
    "replica_identity": "debezium-postgres-data-replica-identity.txt",
}


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


@pytest.fixture(scope="module")
def flink_build(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Build:
    landing_dir: Path = tmp_path_factory.mktemp("flink")
    for stream, file_name in STREAMS.items():
        lines = corpus_lines("flink-json", file_name)
        records = [
            KafkaRecord(
                f"{stream}.inventory.products", 0, offset, json.dumps({"id": row_id}), in_database(line, stream)
            )
            for offset, (row_id, line) in enumerate(zip(row_ids(), lines, strict=True))
        ]
        write_kcat_file(landing_dir / f"{stream}.json", records)
    return dbt_project.build(landing_dir, schema="flink")


@pytest.fixture(params=list(STREAMS))
def stream(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_event_becomes_a_change(flink_build: Build, stream: str) -> None:
    changes = flink_build.rows(f"select source_table from `{{schema}}`.cdc_changes where source_db = '{stream}'")
    assert len(changes) == 16
    assert {change["source_table"] for change in changes} == {"inventory.products"}
    assert flink_build.table("cdc_quarantine") == []


def test_current_state_is_flinks_final_state(flink_build: Build, stream: str) -> None:
    current = flink_build.rows(f"select row from `{{schema}}`.cdc_current where source_db = '{stream}'")
    expected = expected_rows("debezium-expected-final-state.txt")
    assert sorted(product(row["row"]) for row in current) == sorted(expected_product(row) for row in expected)


def test_history_holds_every_derived_scd2_version(flink_build: Build, stream: str) -> None:
    history = flink_build.rows(
        "select row, unix_millis(valid_from) as valid_from_ms, unix_millis(valid_to) as valid_to_ms,"
        f" is_current from `{{schema}}`.cdc_history where source_db = '{stream}'"
    )
    actual = {
        (*product(version["row"]), version["valid_from_ms"], version["valid_to_ms"], version["is_current"])
        for version in history
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


def test_deleted_row_has_no_current_version_and_ends_by_delete(flink_build: Build, stream: str) -> None:
    versions: list[dict[str, Any]] = flink_build.rows(
        "select version, ended_by, is_current from `{schema}`.cdc_history"
        f""" where source_db = '{stream}' and row_key = '{{{{"id":111}}}}' order by version"""
    )
    assert [(v["version"], v["ended_by"], v["is_current"]) for v in versions] == [(1, "u", False), (2, "d", False)]
