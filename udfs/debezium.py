"""The Debezium change-event envelope (relational connectors), with or without the converter schema.

Fields follow the Debezium documentation of the relational connectors: `before`, `after`,
`source` (connector, db, schema, table, ts_ms, snapshot, txId, and each connector's position:
PostgreSQL lsn and sequence, MySQL/MariaDB file, pos and row, ...), `op`, `ts_ms` and the optional
`transaction` block. MongoDB's envelopes (documents rather than rows) are parsed by
`udfs.mongodb`, which shares this module's envelope helpers.
"""

from collections.abc import Callable, Mapping
from typing import Any

from udfs import positions
from udfs.events import ParsedRecord, change, ignored
from udfs.keys import row_key_from_kafka_key
from udfs.logical_types import decode_struct, is_unavailable, struct_field_schemas
from udfs.reasons import IgnoreClass, Reason, RecordError

ROW_OPS = frozenset("crud")
TRUNCATE = "t"
MESSAGE = "m"
"""PostgreSQL logical decoding message: not a row change."""

SOURCE_FORMAT = "debezium"

MAX_BIGINT = 2**63 - 1
MIN_BIGINT = -(2**63)
MAX_TIMESTAMP_MS = MAX_BIGINT // 1000
"""Beyond this, `timestamp_millis` overflows counting microseconds (and a build would fail)."""

PositionOf = Callable[[Mapping[str, Any], tuple[int, int]], tuple[int, ...] | None]
"""A connector's position from its `source` block, given the event's Kafka (partition, offset)."""


def _from_source(position_of: Callable[[Mapping[str, Any]], tuple[int, ...] | None]) -> PositionOf:
    """A position the `source` block gives alone, whatever the Kafka position."""
    return lambda source, _kafka_position: position_of(source)


_POSITION_BY_CONNECTOR: dict[str, PositionOf] = {
    "postgresql": _from_source(positions.postgres_position),
    "db2": _from_source(positions.db2_position),
    "mongodb": _from_source(positions.mongodb_position),
    "mysql": _from_source(positions.mysql_position),
    "mariadb": _from_source(positions.mysql_position),
    "sqlserver": _from_source(positions.sqlserver_position),
    # Oracle's changes of one transaction at one SCN may have no order of their own (no rs_id).
    "oracle": positions.oracle_position,
}


_ENVELOPE_FIELDS = frozenset({"source", "before", "after", "patch", "filter", "updateDescription"})
"""Fields of which every Debezium envelope has at least one besides `op` (a flattened row with a
column named `op` has none of them, unless its table also has such a column)."""


def is_envelope(body: Mapping[str, Any]) -> bool:
    return "op" in body and not _ENVELOPE_FIELDS.isdisjoint(body)


def parse_envelope(
    body: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    key_text: str | None,
    partition: int,
    offset: int,
) -> ParsedRecord:
    """A Debezium envelope of a relational connector → a change (or an ignored logical decoding
    message). MongoDB's envelopes go to `udfs.mongodb` (see `udfs.records`)."""
    if body.get("op") == MESSAGE:
        return ignored(IgnoreClass.LOGICAL_DECODING_MESSAGE)
    op = row_op(body)
    source = source_block(body, op)
    field_schemas = struct_field_schemas(schema)
    before = _row_image(body, "before", field_schemas)
    after = _row_image(body, "after", field_schemas)
    if op in "cru" and after is None:
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} without an after image")
    if op not in "cru" and after is not None:
        # A delete or truncate leaves no row: an after image would contradict the op.
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} with an after image")

    row_key = None
    if op in ROW_OPS:
        row_key = row_key_from_kafka_key(key_text)
        if row_key is None:
            raise RecordError(Reason.MISSING_KEY, "a row change needs a Kafka key that is a JSON object")

    raw_after = body.get("after")
    unavailable = tuple(
        name for name, value in (raw_after.items() if isinstance(raw_after, Mapping) else ()) if is_unavailable(value)
    )
    return change_record(
        body,
        source,
        op,
        row_key=row_key,
        before=before,
        after=after,
        unavailable_columns=unavailable,
        changed=changed_columns(op, before, after, unavailable),
        partition=partition,
        offset=offset,
    )


def row_op(body: Mapping[str, Any]) -> str:
    """The envelope's `op` when it is a row change or a truncate; anything else is `unknown_op`."""
    op = body.get("op")
    if not isinstance(op, str) or (op not in ROW_OPS and op != TRUNCATE):
        raise RecordError(Reason.UNKNOWN_OP, f"op {op!r:.40} is not one of c, r, u, d, t, m")
    return op


def source_block(body: Mapping[str, Any], op: str) -> Mapping[str, Any]:
    source = body.get("source")
    if not isinstance(source, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} without a source block")
    return source


def change_record(
    body: Mapping[str, Any],
    source: Mapping[str, Any],
    op: str,
    *,
    row_key: str | None,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    partition: int,
    offset: int,
    unavailable_columns: tuple[str, ...] = (),
    changed: tuple[str, ...] | None = None,
    patch: str | None = None,
) -> ParsedRecord:
    """The change of an envelope whose images are decoded: the envelope's and `source`'s fields."""
    table = source_table(source)
    if table is None:
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} with a source block that names no table")
    connector = text_field(source.get("connector"))
    transaction = body.get("transaction")
    return change_from_source(
        source,
        op,
        connector=connector,
        table=table,
        event_ts_ms=timestamp_ms_field(body.get("ts_ms")),
        position=source_position(connector, source, partition, offset),
        transaction=transaction if isinstance(transaction, Mapping) else {},
        row_key=row_key,
        before=before,
        after=after,
        unavailable_columns=unavailable_columns,
        changed=changed,
        patch=patch,
    )


def change_from_source(
    source: Mapping[str, Any],
    op: str,
    *,
    connector: str | None,
    table: str | None,
    event_ts_ms: int | None,
    position: str,
    transaction: Mapping[str, Any],
    row_key: str | None,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    unavailable_columns: tuple[str, ...] = (),
    changed: tuple[str, ...] | None = None,
    patch: str | None = None,
) -> ParsedRecord:
    """A Debezium change: the fields of its `source` block and of its `transaction` block (`id`,
    `total_order`, `data_collection_order`), with those its caller read from an envelope
    (`change_record`) or a flattened record (`udfs.flattened`)."""
    source_ts_ms = timestamp_ms_field(source.get("ts_ms"))
    return change(
        SOURCE_FORMAT,
        op,
        connector=connector,
        source_db=text_field(source.get("db")),
        source_table=table,
        row_key=row_key,
        before=before,
        after=after,
        unavailable_columns=unavailable_columns,
        changed_columns=changed,
        # When the database made the change; when the connector saw it if the source does not say.
        source_ts_ms=source_ts_ms if source_ts_ms is not None else event_ts_ms,
        event_ts_ms=event_ts_ms,
        position=position,
        source_lsn=int_field(source.get("lsn")),
        source_tx_id=text_field(source.get("txId")),
        source_snapshot=snapshot_flag(source.get("snapshot")),
        transaction_id=text_field(transaction.get("id")),
        transaction_total_order=int_field(transaction.get("total_order")),
        transaction_data_collection_order=int_field(transaction.get("data_collection_order")),
        patch=patch,
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


def _row_image(
    body: Mapping[str, Any], name: str, field_schemas: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any] | None:
    image = body.get(name)
    if image is None:
        return None
    if not isinstance(image, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} must be an object, not {type(image).__name__}")
    return decode_struct(image, field_schemas.get(name))


def source_position(connector: str | None, source: Mapping[str, Any], partition: int, offset: int) -> str:
    """The sort key of the source position the connector's `source` block gives, else Kafka's."""
    position_of = _POSITION_BY_CONNECTOR.get(connector or "")
    numbers = position_of(source, (partition, offset)) if position_of else None
    if numbers is None:
        return positions.kafka_sort_key(partition, offset)
    return positions.sort_key(positions.SOURCE_POSITION, numbers)


def int_field(value: Any) -> int | None:
    """An integer that fits Spark's `bigint`; None for anything else (a wider one included)."""
    if isinstance(value, int) and not isinstance(value, bool) and MIN_BIGINT <= value <= MAX_BIGINT:
        return value
    return None


def timestamp_ms_field(value: Any) -> int | None:
    """Epoch milliseconds that Spark's `timestamp_millis` can take; None for anything else."""
    number = int_field(value)
    return number if number is not None and abs(number) <= MAX_TIMESTAMP_MS else None


def text_field(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)
