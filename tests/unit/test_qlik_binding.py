"""The Qlik binding rule is written once: the model int_qlik_records_bound is its definition, and
`udfs.qlik_binding` (what `cdc-dbt scaffold` binds by) gives the answers of the model's dbt unit
tests on the same rows, read from their YAML. (The dbt unit tests run with the demo build, under
tests/integration; this test needs no Spark.)"""

from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from udfs.qlik import parse_qlik_record
from udfs.qlik_binding import MetadataMessage, QlikBinder, data_column_names, metadata_column_names, preference
from udfs.records import parse_record

UNIT_TESTS = PACKAGE_PROJECT_DIR / "models" / "intermediate" / "_int_qlik_records_bound__unit_tests.yml"


def model_unit_tests(path: Path = UNIT_TESTS) -> list[dict[str, Any]]:
    tests: list[dict[str, Any]] = yaml.safe_load(path.read_text())["unit_tests"]
    return [test for test in tests if test["model"] == "int_qlik_records_bound"]


def given_rows(test: dict[str, Any]) -> list[dict[str, Any]]:
    (given,) = test["given"]
    assert given["input"] == "ref('int_records_parsed_unbound')"
    rows: list[dict[str, Any]] = given["rows"]
    return rows


def bound_by_python(rows: list[dict[str, Any]]) -> set[tuple[str, int, int, str | None]]:
    """What int_qlik_records_bound writes for these rows (the columns its unit tests expect),
    with the metadata chosen by udfs.qlik_binding."""
    binder = QlikBinder()
    for row in rows:
        if row.get("ignore_class") == "metadata_message":
            binder.add_metadata(
                MetadataMessage(row["topic"], row["partition"], row["offset"], row["qlik_schema_id"], row["payload"])
            )
    bound = set()
    for row in rows:
        if row.get("reason") != "unknown_qlik_schema":
            continue
        position = row["topic"], row["partition"], row["offset"]
        metadata = binder.metadata_for(*position, row.get("qlik_schema_id"), row["payload"])
        if metadata is not None:
            parsed = parse_qlik_record(row["payload"], metadata, row["partition"], row["offset"])
            assert parsed.outcome == "change", parsed
            bound.add((*position, parsed.qlik_schema_id))
    return bound


@pytest.mark.parametrize("test", model_unit_tests(), ids=lambda test: test["name"])
def test_the_scaffolds_binding_gives_the_models_answers(test: dict[str, Any]) -> None:
    expected = {
        (row["topic"], row["partition"], row["offset"], row["qlik_schema_id"]) for row in test["expect"]["rows"]
    }
    assert bound_by_python(given_rows(test)) == expected


@pytest.mark.parametrize("test", model_unit_tests(), ids=lambda test: test["name"])
def test_the_given_rows_are_what_the_first_parse_makes_of_their_payloads(test: dict[str, Any]) -> None:
    for row in given_rows(test):
        parsed = parse_record(None, row["payload"], row["partition"], row["offset"], row["topic"])
        assert (parsed.ignore_class, parsed.reason, parsed.qlik_schema_id) == (
            row.get("ignore_class"),
            row.get("reason"),
            row.get("qlik_schema_id"),
        )


def test_the_model_has_unit_tests_of_both_rules() -> None:
    names = [test["name"] for test in model_unit_tests()]
    assert any("schema_id" in name for name in names)
    assert any("newest_version_below" in name for name in names)


def test_column_names_are_read_where_the_model_reads_them() -> None:
    assert metadata_column_names('{"message":{"tableStructure":{"tableColumns":{"B":{},"A":{}}}}}') == ("A", "B")
    assert metadata_column_names('{"schemaId":"S","tableStructure":{"tableColumns":{"A":{}}}}') == ("A",)
    assert data_column_names('{"data":{"B":1,"A":2},"beforeData":{"C":3,"A":2}}') == ("A", "B", "C")
    # An enveloped data message has no top-level `data`: its column names are empty, as in SQL.
    assert data_column_names('{"magic":"atMSG","message":{"data":{"A":1}}}') == ()
    assert data_column_names("not json") == ()


def test_the_preference_puts_the_newest_below_first_then_the_earliest() -> None:
    def at(partition: int, offset: int) -> MetadataMessage:
        return MetadataMessage("t", partition, offset, f"{partition}:{offset}", "{}")

    candidates = [at(0, 3), at(0, 8), at(1, 0), at(0, 12)]
    chosen = {
        (partition, offset): min(candidates, key=lambda m: preference(m, partition, offset)).schema_id
        for partition, offset in [(0, 1), (0, 5), (0, 10), (0, 13), (1, 5), (2, 0)]
    }
    assert chosen == {(0, 1): "0:3", (0, 5): "0:3", (0, 10): "0:8", (0, 13): "0:12", (1, 5): "1:0", (2, 0): "0:3"}
