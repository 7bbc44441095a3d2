"""Bare Qlik data messages bind by their columns across a DDL change, whatever the landing order.

A bare data message (no `atMSG` envelope) names no schema: it binds to the metadata message of its
topic whose column names are the keys of its `data` and `beforeData`. The demo's Qlik stream has two
table versions of HR.EMPLOYEES (version 2 adds DEPARTMENT). Here its metadata is published with the
data, every other data message is stripped of its envelope, and the stream lands shuffled over three
builds into one schema: every data message must be applied to its version, so the history equals
that of the demo's build (every message enveloped, landed at once), and none stays quarantined.
"""

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import DEMO_LANDING, Build, DbtProject

QLIK_TOPICS = ("qlik.HR.EMPLOYEES", "qlik.metadata")
METADATA_PARTITION = 10
BUILDS = 3
SEED = 17
HISTORY = (
    "select row_key, version, row, valid_from, valid_to, is_current, ended_by from `{schema}`.cdc_history"
    " where source_table = 'HR.EMPLOYEES' order by row_key, version"
)


def demo_qlik_records() -> list[dict[str, Any]]:
    """The demo's Qlik records as kcat writes them, every other data message bare, and the metadata
    published with the data (a bare message binds within its topic): in a partition of its own."""
    data_topic, metadata_topic = QLIK_TOPICS
    records = [
        json.loads(line)
        for topic in QLIK_TOPICS
        for path in sorted((DEMO_LANDING / topic).glob("*.json"))
        for line in path.read_text().splitlines()
    ]
    for record in records:
        if record["topic"] == metadata_topic:
            record["topic"], record["partition"] = data_topic, METADATA_PARTITION + record["partition"]
    data_messages = [record for record in records if '"type":"DT"' in record["payload"]]
    for record in data_messages[::2]:
        record["payload"] = json.dumps(json.loads(record["payload"])["message"], separators=(",", ":"))
    return records


@pytest.fixture(scope="module")
def shuffled_build(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Build:
    landing: Path = tmp_path_factory.mktemp("qlik-bare")
    records = demo_qlik_records()
    random.Random(SEED).shuffle(records)
    for number in range(BUILDS):
        batch = records[number::BUILDS]
        (landing / f"batch-{number}.json").write_text("".join(json.dumps(record) + "\n" for record in batch))
        # Only the last build runs the data tests: the tables in between are not compared.
        build = dbt_project.build(
            landing,
            schema="qlik_bare",
            select="+cdc_current +cdc_history +cdc_quarantine",
            data_tests=number == BUILDS - 1,
        )
    return build


def test_bare_messages_land_shuffled_and_every_one_binds_to_its_table_version(
    shuffled_build: Build, demo_build: Build
) -> None:
    held = "select count(*) as n from `{schema}`.cdc_quarantine where reason = 'unknown_qlik_schema'"
    assert shuffled_build.rows(held) == [{"n": 0}]
    bare = [json.loads(record["payload"]) for record in demo_qlik_records() if '"magic"' not in record["payload"]]
    versions = {"DEPARTMENT" in message["data"] for message in bare}
    assert versions == {False, True}, "the test lands bare data messages of both table versions"
    assert shuffled_build.rows(HISTORY) == demo_build.rows(HISTORY)
