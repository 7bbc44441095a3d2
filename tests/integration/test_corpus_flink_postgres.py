"""Apache Flink's captured Debezium PostgreSQL streams (../shared/corpus/flink-json).

The three files carry the same 16 events: with the converter schema, without it, and as captured
with the table's default REPLICA IDENTITY (updates without before image; the delete without any
image, so its key can only come from the Kafka key). Each is wrapped as kcat records in one
partition, keyed `{"id": ...}` from the row, and must give the final state Flink's changelog
implies and every SCD2 version derived from it.
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
TOPIC = "fullfillment.inventory.products"


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


@pytest.fixture(scope="module", params=list(STREAMS))
def build(request: pytest.FixtureRequest, dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Build:
    stream: str = request.param
    landing_dir: Path = tmp_path_factory.mktemp(f"flink_{stream}")
    lines = corpus_lines("flink-json", STREAMS[stream])
    records = [
        KafkaRecord(TOPIC, 0, offset, json.dumps({"id": row_id}), line)
        for offset, (row_id, line) in enumerate(zip(row_ids(), lines, strict=True))
    ]
    write_kcat_file(landing_dir / "products.json", records)
    return dbt_project.build(landing_dir, schema=f"flink_{stream}")


def test_every_event_becomes_a_change(build: Build) -> None:
    changes = build.table("cdc_changes")
    assert len(changes) == 16
    assert {change["source_table"] for change in changes} == {"inventory.products"}
    assert build.table("cdc_quarantine") == []


def test_current_state_is_flinks_final_state(build: Build) -> None:
    current = build.rows("select row from `{schema}`.cdc_current")
    expected = expected_rows("debezium-expected-final-state.txt")
    assert sorted(product(row["row"]) for row in current) == sorted(expected_product(row) for row in expected)


def test_history_holds_every_derived_scd2_version(build: Build) -> None:
    history = build.rows(
        "select row, unix_millis(valid_from) as valid_from_ms, unix_millis(valid_to) as valid_to_ms,"
        " is_current from `{schema}`.cdc_history"
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


def test_deleted_row_has_no_current_version_and_ends_by_delete(build: Build) -> None:
    versions: list[dict[str, Any]] = build.rows(
        "select version, ended_by, is_current from `{schema}`.cdc_history"
        """ where row_key = '{{"id":111}}' order by version"""
    )
    assert [(v["version"], v["ended_by"], v["is_current"]) for v in versions] == [(1, "u", False), (2, "d", False)]
