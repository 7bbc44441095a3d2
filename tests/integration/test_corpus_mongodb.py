"""Debezium MongoDB 1.1.1 events captured in zeromicro/cds (../shared/corpus/zeromicro-cds-debezium-mongodb-1x).

Updates carry only a `patch` ($set) and deletes only a `filter`: the history must apply each patch
to the previous document, exactly as the derived version table in expected.txt says.
"""

import json
from typing import Any

import pytest

from tests.corpus import corpus_lines
from tests.integration.conftest import Build
from tests.integration.corpus_tables import CorpusTables, corpus_tables
from tests.kcat import KafkaRecord

FOLDER = "zeromicro-cds-debezium-mongodb-1x"
COLUMNS = ("_id", "a", "create", "b", "c", "thedate")
TOPIC = "cds.inventory.inventory"


def landing_files() -> dict[str, list[KafkaRecord]]:
    lines = corpus_lines(FOLDER, "debezium-mongodb-1.1.1-sequence.jsonl")
    return {"mongo.json": [KafkaRecord(TOPIC, 0, offset, None, line) for offset, line in enumerate(lines)]}


@pytest.fixture(scope="module")
def tables(combined_build: Build) -> CorpusTables:
    landing_files()  # skips where ../shared/corpus is absent: the build then holds none of it
    return corpus_tables(combined_build, {TOPIC})


def expected_versions() -> list[dict[str, Any]]:
    versions = []
    for line in corpus_lines(FOLDER, "expected.txt"):
        if line.startswith("#"):
            continue
        version, valid_from, valid_to, *values = line.split("|")
        document = {
            column: (value if column in ("_id", "thedate") else float(value))
            for column, value in zip(COLUMNS, values, strict=True)
            if value != "null"
        }
        versions.append({"version": int(version), "valid_from": int(valid_from), "valid_to": int(valid_to), **document})
    return versions


def test_patches_apply_to_the_previous_document(tables: CorpusTables) -> None:
    history = sorted(tables.history, key=lambda version: version["version"])
    actual = [
        {
            "version": version["version"],
            "valid_from": version["valid_from_ms"],
            "valid_to": version["valid_to_ms"],
            **{column: value for column, value in json.loads(version["row"]).items() if value is not None},
        }
        for version in history
    ]
    assert actual == expected_versions()
    assert [version["ended_by"] for version in history] == ["u", "u", "d"]


def test_deleted_document_has_no_current_row(tables: CorpusTables) -> None:
    assert tables.current == []
    assert tables.quarantine == []
