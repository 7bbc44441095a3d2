"""A landing folder full of hostile input (tests/hostile, plus megabyte payloads made here) builds
green, every record accounted for, each with the outcome the parsing core gives it alone.

tests/unit/test_hostile_corpus.py mirrors the build's path in Python and checks every case
against the corpus README; this test checks that the build itself agrees with that mirror record
by record, that nothing crashes it (not even bytes that are not UTF-8, which Spark's text
source does not check), and that `cdc_reconciliation` finds every record.
"""

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.conftest import Build, DbtProject
from tests.unit.test_hostile_corpus import HOSTILE, NO_IDENTITY, README, land_folder


def huge_lines() -> list[str]:
    """A 2 MB column, the same payload cut in half, and 2 MB of garbage."""
    payload = json.dumps(
        {"op": "c", "source": {"connector": "postgresql", "table": "t"}, "after": {"id": 1, "notes": "x" * 2_000_000}}
    )
    records = [(1, payload), (2, payload[:-1_000_000])]
    lines = [
        json.dumps(
            {"topic": f"hostile.huge-{offset}", "partition": 0, "offset": offset, "key": '{"id":1}', "payload": text}
        )
        for offset, text in records
    ]
    return [*lines, "{" + "garbage " * 250_000]


@pytest.fixture(scope="module")
def landing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    landing = tmp_path_factory.mktemp("hostile")
    for path in HOSTILE.iterdir():
        if path != README:
            shutil.copy(path, landing / path.name)
    (landing / "huge.jsonl").write_text("\n".join(huge_lines()) + "\n")
    return landing


@pytest.fixture(scope="module")
def hostile_build(dbt_project: DbtProject, landing: Path) -> Build:
    return dbt_project.build(landing, schema="hostile", example_marts=True)


def test_every_record_gets_the_outcome_the_parsing_core_gives_it(hostile_build: Build, landing: Path) -> None:
    expected = Counter(
        (record.topic or NO_IDENTITY, record.offset, record.expected_text) for record in land_folder(landing)
    )
    outcomes = hostile_build.rows(
        "select topic, `offset`, outcome, coalesce(op, ignore_class, reason) as what from `{schema}`.int_records_parsed"
    )
    actual = Counter(
        (row["topic"] or NO_IDENTITY, row["offset"], f"{row['outcome']} {row['what']}") for row in outcomes
    )
    assert actual == expected


def test_every_landed_record_is_accounted_for(hostile_build: Build, landing: Path) -> None:
    totals = hostile_build.rows(
        "select sum(landed_records) as landed, sum(unaccounted) as unaccounted, sum(quarantined) as quarantined"
        " from `{schema}`.cdc_reconciliation"
    )[0]
    records = land_folder(landing)
    assert totals == {
        "landed": len(records),
        "unaccounted": 0,
        "quarantined": sum(record.parsed.outcome == "quarantine" for record in records),
    }


def test_quarantine_keeps_the_raw_text_and_never_the_payload_in_the_detail(hostile_build: Build) -> None:
    quarantine = hostile_build.rows(
        "select reason, detail, payload, length(detail) as n from `{schema}`.cdc_quarantine"
    )
    assert quarantine and all(row["detail"] and row["n"] < 1_000 for row in quarantine)
    not_utf8 = [row for row in quarantine if row["reason"] == "invalid_encoding"]
    assert not_utf8 and all(row["payload"] for row in not_utf8)
    cut = hostile_build.rows(
        "select length(payload) as n from `{schema}`.cdc_quarantine where topic = 'hostile.huge-2'"
    )
    assert cut == [{"n": len(json.loads(huge_lines()[1])["payload"])}]


def test_names_from_data_stay_text_and_collisions_are_reported(hostile_build: Build) -> None:
    current = hostile_build.rows("select source_db, source_table, row from `{schema}`.cdc_current")
    by_table = {row["source_table"]: row for row in current}
    assert by_table["we'ird `schema`.tab.le ü"]["source_db"] == "shop`; drop table cdc.cdc_current; --"
    assert json.loads(by_table["public.odd keys"]["row"]) == {"ï d`": 3, "v": 1}
    drift = hostile_build.rows(
        "select column_name, column_identifier, has_identifier_collision from `{schema}`.cdc_schema_drift"
        " where source_table = 'we''ird `schema`.tab.le ü'"
    )
    assert {row["column_name"]: (row["column_identifier"], row["has_identifier_collision"]) for row in drift} == {
        "id": ("id", False),
        "na me": ("na_me", True),
        "na-me": ("na_me", True),
        "ünï": ("_n_", False),
        "a`b": ("a_b", False),
        "x'y": ("x_y", False),
        "1st": ("_st", False),
        'we"ird': ("we_ird", False),
    }
