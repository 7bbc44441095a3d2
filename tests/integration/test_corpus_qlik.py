"""The Qlik Replicate metadata and data pair of ../shared/corpus/qlik (Attunity Replicate 6.3, MySQL).

The data message (a full-load REFRESH of employees.salaries) names neither its table nor its key
(emp_no and from_date, primaryKeyPosition 1 and 2): both come from the metadata message whose
`schemaId` equals its `messageSchemaId`. Landed without its metadata, the data message waits in
the quarantine; the next (incremental) build, after the metadata lands, applies it.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import corpus_file
from tests.integration.conftest import Build, DbtProject
from tests.kcat import KafkaRecord, write_kcat_file

FOLDER = ("qlik", "jcustenborder-attunity-json-converter")
TOPIC = "employees.salaries"
KAFKA_TS_MS = 1_543_000_000_000


def corpus_record(name: str, offset: int) -> KafkaRecord:
    # The files are pretty-printed; a Kafka record holds one JSON text, compacted here.
    text = json.dumps(json.loads(corpus_file(*FOLDER, name).read_text()), separators=(",", ":"))
    return KafkaRecord(TOPIC, 0, offset, None, text, ts_ms=KAFKA_TS_MS)


@pytest.fixture(scope="module")
def landing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    landing = tmp_path_factory.mktemp("qlik")
    write_kcat_file(landing / "data.json", [corpus_record("Data.json", 1)])
    return landing


@pytest.fixture(scope="module")
def data_before_metadata(dbt_project: DbtProject, landing: Path) -> dict[str, list[dict[str, Any]]]:
    """The first build's quarantine and changes, read before the next build into the same schema.
    Its data tests are left out: it holds one quarantined record and no change, both read whole
    here; the next build's data tests run over both messages."""
    build = dbt_project.build(landing, schema="qlik", data_tests=False)
    return {table: build.table(table) for table in ("cdc_quarantine", "cdc_changes")}


@pytest.fixture(scope="module")
def metadata_landed_later(
    dbt_project: DbtProject, landing: Path, data_before_metadata: dict[str, list[dict[str, Any]]]
) -> Build:
    write_kcat_file(landing / "metadata.json", [corpus_record("Metadata.json", 0)])
    return dbt_project.build(landing, schema="qlik")


def test_data_without_its_metadata_waits_in_the_quarantine(
    data_before_metadata: dict[str, list[dict[str, Any]]],
) -> None:
    quarantine = data_before_metadata["cdc_quarantine"]
    assert [(row["offset"], row["reason"]) for row in quarantine] == [(1, "unknown_qlik_schema")]
    assert "8FB9D3C10EA4B25751DF9CC8318F0A02" in quarantine[0]["detail"]
    assert data_before_metadata["cdc_changes"] == []


def test_refresh_is_applied_once_its_metadata_lands(metadata_landed_later: Build) -> None:
    assert metadata_landed_later.table("cdc_quarantine") == []
    changes = metadata_landed_later.rows(
        "select source_format, connector, source_db, source_table, op, row_key, after, before,"
        " changed_columns, unix_millis(source_ts) as source_ts from `{schema}`.cdc_changes"
    )
    assert changes == [
        {
            "source_format": "qlik",
            "connector": "qlik",
            "source_db": None,
            "source_table": "employees.salaries",
            "op": "r",
            "row_key": '{"emp_no":14472,"from_date":"1993-11-25"}',
            "after": '{"emp_no":14472,"salary":49592,"from_date":"1993-11-25","to_date":"1994-11-25"}',
            "before": None,
            "changed_columns": ["emp_no", "salary", "from_date", "to_date"],
            # A REFRESH carries no timestamp: it is dated by Kafka.
            "source_ts": KAFKA_TS_MS,
        }
    ]
    current = metadata_landed_later.rows("select source_table, row_key, row, op from `{schema}`.cdc_current")
    assert current == [
        {
            "source_table": "employees.salaries",
            "row_key": '{"emp_no":14472,"from_date":"1993-11-25"}',
            "row": '{"emp_no":14472,"salary":49592,"from_date":"1993-11-25","to_date":"1994-11-25"}',
            "op": "r",
        }
    ]


def test_the_held_message_is_bound_by_the_incremental_build(metadata_landed_later: Build) -> None:
    """The second build parsed only the metadata message (the data message was not read again from
    its file) and bound the held data message, whose outcome is then the bound row."""
    unbound = metadata_landed_later.rows(
        "select `offset`, outcome, reason, parsed_at = max(parsed_at) over () as in_second_build"
        " from `{schema}`.int_records_parsed_unbound order by parsed_at, `offset`"
    )
    assert [tuple(row.values()) for row in unbound] == [
        (1, "quarantine", "unknown_qlik_schema", False),
        (0, "ignored", None, True),
    ]
    bound = metadata_landed_later.rows("select `offset`, outcome, op from `{schema}`.int_qlik_records_bound")
    assert [tuple(row.values()) for row in bound] == [(1, "change", "r")]
    parsed = metadata_landed_later.rows("select `offset`, outcome from `{schema}`.int_records_parsed order by `offset`")
    assert [tuple(row.values()) for row in parsed] == [(0, "ignored"), (1, "change")]
    deliveries = metadata_landed_later.table("int_deliveries_loaded")
    assert len(deliveries) == 2 and len({row["loaded_at"] for row in deliveries}) == 2
