"""Debezium transaction markers: ignored records that keep what `cdc_transactions` counts against."""

import json
from typing import Any

import pytest

from udfs.records import parse_record

# The shapes of Debezium's documentation ("Transaction metadata"), with the converter's schema
# and without it.
BEGIN = {"status": "BEGIN", "id": "571:53195829", "ts_ms": 1486500577125, "event_count": None, "data_collections": None}
END = {
    "status": "END",
    "id": "571:53195832",
    "ts_ms": 1486500577691,
    "event_count": 2,
    "data_collections": [
        {"data_collection": "s1.a", "event_count": 1},
        {"data_collection": "s2.a", "event_count": 1},
    ],
}


def test_begin_keeps_its_id_and_no_counts() -> None:
    parsed = parse_record('{"id":"571:53195829"}', json.dumps(BEGIN), 0, 0)
    assert (parsed.outcome, parsed.ignore_class) == ("ignored", "transaction_marker")
    assert (parsed.transaction_id, parsed.transaction_status, parsed.event_ts_ms) == (
        "571:53195829",
        "BEGIN",
        1486500577125,
    )
    assert (parsed.transaction_event_count, parsed.transaction_collection_counts) == (None, None)


@pytest.mark.parametrize("wrapped", [False, True])
def test_end_keeps_the_event_counts_per_data_collection(wrapped: bool) -> None:
    payload = {"schema": {"type": "struct", "fields": []}, "payload": END} if wrapped else END
    parsed = parse_record(None, json.dumps(payload), 0, 1)
    assert (parsed.transaction_id, parsed.transaction_status) == ("571:53195832", "END")
    assert parsed.transaction_event_count == 2
    assert parsed.transaction_collection_counts == '{"s1.a":1,"s2.a":1}'


@pytest.mark.parametrize(
    "change",
    [
        {"event_count": "2"},
        {"event_count": -1},
        {"data_collections": {"s1.a": 1}},
        {
            "data_collections": [
                {"data_collection": "s1.a", "event_count": 1},
                {"data_collection": "s1.a", "event_count": 1},
            ]
        },
        {"data_collections": [{"event_count": 1}]},
        {"id": {"nested": 1}},
    ],
)
def test_a_malformed_end_is_quarantined_not_counted(change: dict[str, Any]) -> None:
    parsed = parse_record(None, json.dumps(END | change), 0, 1)
    assert (parsed.outcome, parsed.reason) == ("quarantine", "invalid_envelope")
    assert parsed.detail
