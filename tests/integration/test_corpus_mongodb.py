"""Debezium MongoDB 1.1.1 events captured in zeromicro/cds (../shared/corpus/zeromicro-cds-debezium-mongodb-1x).

Updates carry only a `patch` ($set) and deletes only a `filter`: the history must apply each patch
to the previous document, exactly as the derived version table in expected.txt says.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import corpus_lines
from tests.integration.conftest import Build, DbtProject
from tests.kcat import KafkaRecord, write_kcat_file

FOLDER = "zeromicro-cds-debezium-mongodb-1x"
COLUMNS = ("_id", "a", "create", "b", "c", "thedate")


@pytest.fixture(scope="module")
def mongo_build(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Build:
    # A quote and a space in the landing path: it reaches SQL only as an escaped string literal.
    landing: Path = tmp_path_factory.mktemp("mongodb") / "o'brien's landing"
    lines = corpus_lines(FOLDER, "debezium-mongodb-1.1.1-sequence.jsonl")
    records = [KafkaRecord("cds.inventory.inventory", 0, offset, None, line) for offset, line in enumerate(lines)]
    write_kcat_file(landing / "mongo.json", records)
    return dbt_project.build(landing, schema="mongodb")


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


def test_patches_apply_to_the_previous_document(mongo_build: Build) -> None:
    history = mongo_build.rows(
        "select version, unix_millis(valid_from) as valid_from, unix_millis(valid_to) as valid_to, row, ended_by"
        " from `{schema}`.cdc_history order by version"
    )
    actual = [
        {
            "version": version["version"],
            "valid_from": version["valid_from"],
            "valid_to": version["valid_to"],
            **{column: value for column, value in json.loads(version["row"]).items() if value is not None},
        }
        for version in history
    ]
    assert actual == expected_versions()
    assert [version["ended_by"] for version in history] == ["u", "u", "d"]


def test_deleted_document_has_no_current_row(mongo_build: Build) -> None:
    assert mongo_build.table("cdc_current") == []
    assert mongo_build.table("cdc_quarantine") == []
