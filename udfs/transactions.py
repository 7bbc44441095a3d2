"""Debezium transaction metadata: the BEGIN and END records of the `<prefix>.transaction` topic.

They are not row changes (an ignore class), but an END record says how many events its
transaction wrote per data collection: with the changes' `transaction.id`, the SQL can tell
whether every event of a transaction has landed (`cdc_transactions`).
"""

from collections.abc import Mapping
from typing import Any

from udfs import json_text
from udfs.debezium import MAX_BIGINT, timestamp_ms_field
from udfs.events import ParsedRecord, ignored
from udfs.reasons import IgnoreClass, Reason, RecordError

STATUSES = ("BEGIN", "END")


def is_transaction_marker(body: Mapping[str, Any]) -> bool:
    return body.get("status") in STATUSES and "id" in body and "op" not in body


def parse_transaction_marker(body: Mapping[str, Any]) -> ParsedRecord:
    """A BEGIN or END record → an ignored record that keeps its id, status and event counts.

    Raises `RecordError(INVALID_ENVELOPE)` for an id that is not text or a number, and for an
    END whose `event_count` or `data_collections` are malformed: counting against a wrong
    total would call a transaction complete (or not) for no reason.
    """
    status = body["status"]
    transaction_id = body.get("id")
    if isinstance(transaction_id, bool) or not isinstance(transaction_id, str | int) or transaction_id == "":
        raise RecordError(Reason.INVALID_ENVELOPE, f"transaction id {transaction_id!r:.60} is not text")
    event_count = _count(body.get("event_count"), "event_count") if status == "END" else None
    collection_counts = _collection_counts(body.get("data_collections")) if status == "END" else None
    marker = ignored(IgnoreClass.TRANSACTION_MARKER, detail=f"{status} {transaction_id}")
    return ParsedRecord(
        outcome=marker.outcome,
        ignore_class=marker.ignore_class,
        detail=marker.detail,
        transaction_id=str(transaction_id),
        transaction_status=status,
        transaction_event_count=event_count,
        transaction_collection_counts=json_text.canonical(collection_counts) if collection_counts is not None else None,
        event_ts_ms=timestamp_ms_field(body.get("ts_ms")),
    )


def _collection_counts(collections: Any) -> dict[str, int]:
    if collections is None:
        return {}
    if not isinstance(collections, list):
        raise RecordError(Reason.INVALID_ENVELOPE, "data_collections must be a list")
    counts: dict[str, int] = {}
    for entry in collections:
        name = entry.get("data_collection") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or name in counts:
            raise RecordError(Reason.INVALID_ENVELOPE, f"data_collections entry {entry!r:.80} is malformed or repeated")
        counts[name] = _count(entry.get("event_count"), f"event_count of {name}")
    return counts


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BIGINT:
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} {value!r:.40} is not a count")
    return int(value)
