"""Every version of `cdc_history` has a start, and none ends before it starts.

Two cases real streams produce, in one small landing:
- A Qlik full-load REFRESH carries no source time: it is dated when it reached Kafka, which can be
  after changes the database made to the same row while the full load ran (here: a REFRESH
  published at 08:10 and the UPDATE of that row committed at 08:01, after it in source order). The
  REFRESH's version starts at the UPDATE's time, and ends there: a version starts at its event's
  time, or at the earliest time of the key's later events when one is earlier.
- A Debezium change with no time anywhere (no `source.ts_ms`, no `ts_ms`, a Kafka record without a
  timestamp) is dated by the build that loaded it.
"""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.integration.conftest import Build, DbtProject
from tests.kcat import KafkaRecord, kcat_json
from tests.qlik_messages import qlik_data, qlik_metadata

SCHEMA_ID = "0A0B0C0D0E0F00112233445566778899"
COLUMNS = {"DEPT_ID": ("INT4", 1), "NAME": ("STRING", 0)}
FULL_LOAD_PUBLISHED = datetime(2024, 3, 4, 8, 10, tzinfo=UTC)
UPDATE_COMMITTED = datetime(2024, 3, 4, 8, 1, tzinfo=UTC)


def millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@pytest.fixture(scope="module")
def times_build(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, datetime]:
    landing: Path = tmp_path_factory.mktemp("version-times")
    key = json.dumps({"DEPT_ID": 1})
    records = [
        KafkaRecord("qlik.metadata", 0, 0, json.dumps({"schemaId": SCHEMA_ID}),
                    qlik_metadata(SCHEMA_ID, "HR", "DEPT", COLUMNS), millis(FULL_LOAD_PUBLISHED) - 60_000),
        KafkaRecord("qlik.HR.DEPT", 0, 0, key, qlik_data(SCHEMA_ID, "REFRESH", {"DEPT_ID": 1, "NAME": "Sales"}),
                    millis(FULL_LOAD_PUBLISHED)),
        KafkaRecord("qlik.HR.DEPT", 0, 1, key,
                    qlik_data(SCHEMA_ID, "UPDATE", {"DEPT_ID": 1, "NAME": "Sales EMEA"},
                              {"DEPT_ID": 1, "NAME": "Sales"},
                              changeSequence="00000001709539260000000000000000001",
                              timestamp=UPDATE_COMMITTED.strftime("%Y-%m-%dT%H:%M:%S.000"),
                              transactionId="00000000000000000000000000000001",
                              transactionEventCounter=1, transactionLastEvent=True),
                    millis(FULL_LOAD_PUBLISHED) + 1_000),
    ]  # fmt: skip
    timeless_change = {
        "before": None,
        "after": {"id": 1, "name": "no time"},
        "source": {"connector": "postgresql", "name": "dbserver9", "db": "inventory", "schema": "public",
                   "table": "timeless", "lsn": 100},
        "op": "c",
    }  # fmt: skip
    timeless_line = json.loads(
        kcat_json(KafkaRecord("dbserver9.public.timeless", 0, 0, '{"id":1}', json.dumps(timeless_change)))
    )
    del timeless_line["ts"], timeless_line["tstype"]  # a record written without a timestamp
    (landing / "records.json").write_text(
        "".join(kcat_json(record) + "\n" for record in records) + json.dumps(timeless_line) + "\n"
    )
    started = datetime.now(UTC)
    return dbt_project.build(landing, schema="version_times", select="+cdc_history +cdc_current"), started


def test_a_refresh_published_after_a_change_ends_where_that_change_starts(
    times_build: tuple[Build, datetime],
) -> None:
    build, _ = times_build
    versions = build.rows(
        "select version, op, ended_by, valid_from, valid_to from `{schema}`.cdc_history"
        " where source_table = 'HR.DEPT' order by version"
    )
    committed = UPDATE_COMMITTED.replace(tzinfo=None)
    assert versions == [
        {"version": 1, "op": "r", "ended_by": "u", "valid_from": committed, "valid_to": committed},
        {"version": 2, "op": "u", "ended_by": None, "valid_from": committed, "valid_to": None},
    ]


def test_a_change_with_no_time_starts_when_its_build_loaded_it(times_build: tuple[Build, datetime]) -> None:
    build, started = times_build
    [version] = build.rows("select valid_from from `{schema}`.cdc_history where source_table = 'public.timeless'")
    loaded = version["valid_from"].replace(tzinfo=UTC)
    assert started - timedelta(seconds=1) <= loaded <= datetime.now(UTC)
