"""Qlik transactions in `cdc_transactions`: complete once the last event and every one before it landed.

Qlik Replicate sends no transaction markers: each change numbers itself within its transaction
(`transactionEventCounter`, from 1) and the last one says it is (`transactionLastEvent`). One
small landing holds a transaction landed whole (its first event delivered twice, counted once), one
whose second of three events is missing, and one of which only the first event has landed.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Build, DbtProject
from tests.kcat import KafkaRecord, write_kcat_file
from tests.qlik_messages import qlik_data, qlik_metadata

SCHEMA_ID = "1A1B1C1D1E1F00112233445566778899"
TOPIC = "qlik.SALES.ACCOUNTS"
WHOLE, GAPPED, BEGUN = (f"0000000000000000000000000000000{number}" for number in (1, 2, 3))
# (transaction, event number, is it the last): what lands, in this order.
EVENTS = [
    (WHOLE, 1, False),
    (WHOLE, 2, True),
    (WHOLE, 1, False),  # delivered twice
    (GAPPED, 1, False),
    (GAPPED, 3, True),
    (BEGUN, 1, False),
]


def change(offset: int, transaction: str, number: int, is_last: bool) -> KafkaRecord:
    """The same event whatever its offset: a second delivery of it is a duplicate."""
    account, name = number, f"{transaction[-1]}.{number}"
    payload = qlik_data(
        SCHEMA_ID, "UPDATE", {"ACCOUNT_ID": account, "NAME": name}, {"ACCOUNT_ID": account, "NAME": "before"},
        changeSequence=f"{20240304080000000000000000000000000 + 10 * int(transaction) + number}",
        timestamp=f"2024-03-04T08:0{int(transaction)}:0{number}.000",
        transactionId=transaction, transactionEventCounter=number, transactionLastEvent=is_last,
    )  # fmt: skip
    return KafkaRecord(TOPIC, 0, offset, json.dumps({"ACCOUNT_ID": account}), payload)


@pytest.fixture(scope="module")
def transactions_build(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Build:
    landing: Path = tmp_path_factory.mktemp("qlik-transactions")
    metadata = qlik_metadata(SCHEMA_ID, "SALES", "ACCOUNTS", {"ACCOUNT_ID": ("INT4", 1), "NAME": ("STRING", 0)})
    write_kcat_file(
        landing / "records.json",
        [
            KafkaRecord("qlik.metadata", 0, 0, json.dumps({"schemaId": SCHEMA_ID}), metadata),
            *(change(offset, *event) for offset, event in enumerate(EVENTS)),
        ],
    )
    return dbt_project.build(landing, schema="qlik_transactions", select="+cdc_transactions")


def test_each_qlik_transaction_is_complete_once_every_event_up_to_the_last_has_landed(
    transactions_build: Build,
) -> None:
    rows: dict[str, dict[str, Any]] = {
        row.pop("transaction_id"): row
        for row in transactions_build.rows(
            "select transaction_id, status, is_begin_landed, is_end_landed, expected_event_count,"
            " landed_event_count, is_complete from `{schema}`.cdc_transactions where source_format = 'qlik'"
        )
    }
    assert rows == {
        WHOLE: {"status": "END", "is_begin_landed": True, "is_end_landed": True, "expected_event_count": 2,
                "landed_event_count": 2, "is_complete": True},
        GAPPED: {"status": "END", "is_begin_landed": True, "is_end_landed": True, "expected_event_count": 3,
                 "landed_event_count": 2, "is_complete": False},
        BEGUN: {"status": "BEGIN", "is_begin_landed": True, "is_end_landed": False, "expected_event_count": None,
                "landed_event_count": 1, "is_complete": False},
    }  # fmt: skip


def test_a_qlik_transaction_counts_its_events_per_table_without_an_expected_count(transactions_build: Build) -> None:
    [row] = transactions_build.rows(
        f"select event_counts from `{{schema}}`.cdc_transactions where transaction_id = '{WHOLE}'"
    )
    assert row["event_counts"] == [
        {"data_collection": "SALES.ACCOUNTS", "expected_event_count": None, "landed_event_count": 2}
    ]
