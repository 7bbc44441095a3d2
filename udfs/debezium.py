"""The Debezium change-event envelope (relational connectors), with or without the converter schema.

Fields follow the Debezium documentation of the PostgreSQL and Db2 connectors: `before`, `after`,
`source` (connector, db, schema, table, ts_ms, snapshot, lsn, sequence, txId, ...), `op`, `ts_ms`
and the optional `transaction` block.
"""

from collections.abc import Callable, Mapping
from typing import Any

from udfs import json_text, positions
from udfs.events import ParsedRecord, ignored
from udfs.keys import row_key_from_kafka_key
from udfs.logical_types import decode_struct, is_unavailable
from udfs.reasons import IgnoreClass, Outcome, Reason, RecordError

ROW_OPS = frozenset("crud")
TRUNCATE = "t"
MESSAGE = "m"
"""PostgreSQL logical decoding message: not a row change."""

SOURCE_FORMAT = "debezium"

_POSITION_BY_CONNECTOR: dict[str, Callable[[Mapping[str, Any]], tuple[int, ...] | None]] = {
    "postgresql": positions.postgres_position,
    "db2": positions.db2_position,
    "mongodb": positions.mongodb_position,
}


def is_envelope(body: Mapping[str, Any]) -> bool:
    return "op" in body


def is_transaction_marker(body: Mapping[str, Any]) -> bool:
    return body.get("status") in ("BEGIN", "END") and "id" in body and "op" not in body


def parse_envelope(
    body: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    key_text: str | None,
    partition: int,
    offset: int,
) -> ParsedRecord:
    """A Debezium envelope → a change (or an ignored logical decoding message)."""
    op = body.get("op")
    if op == MESSAGE:
        return ignored(IgnoreClass.LOGICAL_DECODING_MESSAGE)
    if op not in ROW_OPS and op != TRUNCATE:
        raise RecordError(Reason.UNKNOWN_OP, f"op {op!r:.40} is not one of c, r, u, d, t, m")
    source = body.get("source")
    if not isinstance(source, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} without a source block")
    field_schemas = _field_schemas(schema)
    before = _row_image(body, "before", field_schemas)
    after = _row_image(body, "after", field_schemas)
    if op in "cru" and after is None:
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} without an after image")

    row_key = None
    if op in ROW_OPS:
        row_key = row_key_from_kafka_key(key_text)
        if row_key is None:
            raise RecordError(Reason.MISSING_KEY, "a row change needs a Kafka key that is a JSON object")

    raw_after = body.get("after")
    unavailable = tuple(
        name for name, value in (raw_after.items() if isinstance(raw_after, Mapping) else ()) if is_unavailable(value)
    )
    connector = _text(source.get("connector"))
    transaction_block = body.get("transaction")
    transaction: Mapping[str, Any] = transaction_block if isinstance(transaction_block, Mapping) else {}
    source_ts_ms = _int(source.get("ts_ms"))
    return ParsedRecord(
        outcome=Outcome.CHANGE.value,
        source_format=SOURCE_FORMAT,
        connector=connector,
        source_db=_text(source.get("db")),
        source_table=source_table(source),
        op=op,
        row_key=row_key,
        before=json_text.dumps(before) if before is not None else None,
        after=json_text.dumps(after) if after is not None else None,
        unavailable_columns=unavailable,
        changed_columns=changed_columns(op, before, after, unavailable),
        source_ts_ms=source_ts_ms if source_ts_ms is not None else _int(body.get("ts_ms")),
        event_ts_ms=_int(body.get("ts_ms")),
        position=_position(connector, source, partition, offset),
        source_lsn=_int(source.get("lsn")),
        source_tx_id=_text(source.get("txId")),
        source_snapshot=snapshot_flag(source.get("snapshot")),
        transaction_id=_text(transaction.get("id")),
        transaction_total_order=_int(transaction.get("total_order")),
        transaction_data_collection_order=_int(transaction.get("data_collection_order")),
    )


def source_table(source: Mapping[str, Any]) -> str | None:
    """`<schema>.<table>`, or `<db>.<table>` for sources without schemas (MySQL),
    or `<db>.<collection>` for MongoDB, as the source names them."""
    table = source.get("collection") or source.get("table")
    if not table:
        return None
    namespace = source.get("schema") if not source.get("collection") else None
    namespace = namespace or source.get("db")
    return f"{namespace}.{table}" if namespace else str(table)


def snapshot_flag(snapshot: Any) -> str | None:
    """`source.snapshot` as text: booleans become "true"/"false", strings are kept."""
    if isinstance(snapshot, bool):
        return "true" if snapshot else "false"
    return snapshot if isinstance(snapshot, str) else None


def changed_columns(
    op: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, unavailable: tuple[str, ...]
) -> tuple[str, ...] | None:
    """Columns an event set: all of a create's, and for an update those whose value differs from
    a full before image. Unknown (None) when the before image is missing or holds only the key."""
    if after is None:
        return None
    if op in "cr":
        return tuple(after)
    if op == "u" and before is not None and before.keys() == after.keys():
        return tuple(name for name in after if name not in unavailable and after[name] != before[name])
    return None


def _field_schemas(schema: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    if schema is None:
        return {}
    return {field["field"]: field for field in schema.get("fields") or () if isinstance(field, Mapping)}


def _row_image(
    body: Mapping[str, Any], name: str, field_schemas: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any] | None:
    image = body.get(name)
    if image is None:
        return None
    if not isinstance(image, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} must be an object, not {type(image).__name__}")
    return decode_struct(image, field_schemas.get(name))


def _position(connector: str | None, source: Mapping[str, Any], partition: int, offset: int) -> str:
    position_of = _POSITION_BY_CONNECTOR.get(connector or "")
    numbers = position_of(source) if position_of else None
    if numbers is None:
        return positions.kafka_sort_key(partition, offset)
    return positions.sort_key(positions.SOURCE_POSITION, numbers)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)
