"""Qlik Replicate (Qlik Talend Data Integration) Kafka target: JSON metadata and data messages.

Field names follow Qlik's documentation of the Kafka target ("Metadata and data messages"):
- a metadata message: `schemaId`, `lineage` (`server`, `task`, `schema`, `table`, `tableVersion`,
  `timestamp`), `tableStructure.tableColumns` (per column `ordinal`, `type`, `length`,
  `precision`, `scale`, `primaryKeyPosition`) and `dataSchema`;
- a data message: `data`, `beforeData` and `headers` (`operation`, `changeSequence`, `timestamp`,
  `streamPosition`, `transactionId`, `changeMask`, `columnMask`, `externalSchemaId`,
  `transactionEventCounter`, `transactionLastEvent`).
Either comes bare or in the Replicate envelope `{"magic": "atMSG", "type": "MD"|"DT", "headers",
"messageSchemaId", "messageSchema", "message"}`.

A data message names its columns but not their ordinals, its table or its key: those come from
the metadata message whose `schemaId` equals the data message's `messageSchemaId`
(docs/message-formats.md#qlik-replicate).
Finding that metadata message is a join the SQL does: `parse_unbound` (through
`udfs.records.parse_record`) gives both sides of it their `qlik_schema_id`, then
`parse_qlik_record` parses one data message with its metadata message and never raises.
A bare data message has no `messageSchemaId`: only the caller can bind it (`parse_data`).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any

from udfs import json_text, positions
from udfs.converter import load_message
from udfs.debezium import MAX_BIGINT
from udfs.events import ParsedRecord, change, ignored, quarantined
from udfs.masks import columns_for_mask
from udfs.reasons import IgnoreClass, Reason, RecordError

SOURCE_FORMAT = "qlik"
CONNECTOR = "qlik"

MAGIC = "atMSG"
"""The constant that marks the Replicate envelope."""
METADATA = "MD"
DATA = "DT"

REFRESH = "REFRESH"
"""A record of the full load: no source position, no masks, no timestamp."""
OPS = {REFRESH: "r", "INSERT": "c", "UPDATE": "u", "DELETE": "d"}

_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})?"
)
"""`headers.timestamp` as Qlik writes it, e.g. `2019-11-11T09:13:04.067` (UTC, no zone)."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_POSITION_DIGITS = 99
"""`positions.sort_key` writes each number's digit count in two digits."""
_MAX_COUNT_DIGITS = 18


@dataclass(frozen=True, slots=True)
class QlikColumn:
    """One entry of `tableStructure.tableColumns`, under Qlik's names."""

    name: str
    ordinal: int
    type: str | None = None
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    primary_key_position: int = 0
    """Position in the primary key (or unique index) from 1; 0 when not part of it."""


@dataclass(frozen=True, slots=True)
class QlikTableSchema:
    """One version of a table's structure, from one metadata message."""

    schema_id: str
    schema_name: str | None
    table_name: str
    table_version: int | None
    columns: tuple[QlikColumn, ...]
    """In ordinal order; ordinals are unique and at least 1."""

    @property
    def source_table(self) -> str:
        """`<schema>.<table>` as `lineage` names them: the change's `source_table`."""
        return f"{self.schema_name}.{self.table_name}" if self.schema_name else self.table_name

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The primary-key columns in `primaryKeyPosition` order."""
        keyed = sorted((column for column in self.columns if column.primary_key_position > 0), key=_key_position)
        return tuple(column.name for column in keyed)

    @property
    def ordinal_to_column(self) -> dict[int, str]:
        return {column.ordinal: column.name for column in self.columns}


def is_qlik_message(body: Mapping[str, Any]) -> bool:
    """True for the Replicate envelope and for bare metadata and data messages."""
    return body.get("magic") == MAGIC or _is_bare_metadata(body) or _is_bare_data(body)


def is_metadata_message(body: Mapping[str, Any]) -> bool:
    if body.get("magic") == MAGIC:
        return body.get("type") == METADATA
    return _is_bare_metadata(body)


def message_schema_id(body: Mapping[str, Any]) -> str | None:
    """The `messageSchemaId` of an enveloped data message: the `schemaId` of its metadata.

    None for a bare message, and when Qlik sent none (metadata publishing turned off). The
    `headers.externalSchemaId` of a data message is not used: Qlik documents it as the id of the
    message schema (e.g. in a schema registry), not as the metadata message's `schemaId`.
    """
    if body.get("magic") != MAGIC:
        return None
    return _nonempty_text(body.get("messageSchemaId"))


def parse_metadata(body: Mapping[str, Any]) -> QlikTableSchema:
    """A metadata message (enveloped or bare) → the table version it describes.

    Raises `RecordError(INVALID_ENVELOPE)` when it lacks a `schemaId`, a `lineage.table` or
    well-formed `tableColumns` (each column an object with a unique integer `ordinal` ≥ 1).
    """
    message = _message(body)
    if body.get("magic") == MAGIC and body.get("type") != METADATA:
        raise RecordError(Reason.INVALID_ENVELOPE, f"envelope type {body.get('type')!r:.20} is not MD")
    schema_id = _nonempty_text(message.get("schemaId")) or _nonempty_text(body.get("messageSchemaId"))
    if schema_id is None:
        raise RecordError(Reason.INVALID_ENVELOPE, "a Qlik metadata message without a schemaId")
    lineage = message.get("lineage")
    table = _nonempty_text(lineage.get("table")) if isinstance(lineage, Mapping) else None
    if not isinstance(lineage, Mapping) or table is None:
        raise RecordError(Reason.INVALID_ENVELOPE, f"Qlik metadata {schema_id}: no lineage.table")
    structure = message.get("tableStructure")
    table_columns = structure.get("tableColumns") if isinstance(structure, Mapping) else None
    if not isinstance(table_columns, Mapping) or not table_columns:
        raise RecordError(Reason.INVALID_ENVELOPE, f"Qlik metadata {schema_id}: no tableStructure.tableColumns")
    columns = sorted((_column(schema_id, name, spec) for name, spec in table_columns.items()), key=_ordinal)
    for previous, column in pairwise(columns):
        if previous.ordinal == column.ordinal:
            raise RecordError(
                Reason.INVALID_ENVELOPE,
                f"Qlik metadata {schema_id}: {previous.name!r} and {column.name!r} share ordinal {column.ordinal}",
            )
    return QlikTableSchema(
        schema_id=schema_id,
        schema_name=_nonempty_text(lineage.get("schema")),
        table_name=table,
        table_version=_count(lineage.get("tableVersion")),
        columns=tuple(columns),
    )


def parse_data(body: Mapping[str, Any], schema: QlikTableSchema, partition: int, offset: int) -> ParsedRecord:
    """A data message (enveloped or bare), read with the table version it was written under.

    Raises `RecordError`: `invalid_envelope` for a message without `data` or `headers`,
    `unknown_op` for an `operation` other than REFRESH, INSERT, UPDATE, DELETE, `missing_key`
    when the key columns are unknown, not captured or absent from `data`, `invalid_value` for a
    mask that is not hex or a timestamp that is not Qlik's format.
    """
    message = _message(body)
    if body.get("magic") == MAGIC and body.get("type") != DATA:
        raise RecordError(Reason.INVALID_ENVELOPE, f"envelope type {body.get('type')!r:.20} is not DT")
    headers = message.get("headers")
    if not isinstance(headers, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, "a Qlik data message without headers")
    operation = headers.get("operation")
    op = OPS.get(operation) if isinstance(operation, str) else None
    if op is None:
        raise RecordError(Reason.UNKNOWN_OP, f"operation {operation!r:.40} is not one of {', '.join(OPS)}")
    data = _row_image(message, "data")
    if data is None:
        raise RecordError(Reason.INVALID_ENVELOPE, f"a Qlik {operation} without data")
    before_data = _row_image(message, "beforeData")

    ordinals = schema.ordinal_to_column
    column_mask = _mask(headers, "columnMask")
    change_mask = _mask(headers, "changeMask")
    captured, uncaptured_bits = columns_for_mask(column_mask, ordinals)
    unavailable = tuple(name for name in ordinals.values() if name not in captured)
    row_key = _row_key(schema, data, unavailable)

    # A delete's row is in `data` (the row as it was); like Debezium's, it has no after image.
    before = data if op == "d" else before_data
    after = None if op == "d" else data
    changed, unknown_bits = _changed_columns(op, change_mask, ordinals, before, after, unavailable)
    return change(
        SOURCE_FORMAT,
        op,
        detail=_unknown_bits_note(unknown_bits, uncaptured_bits),
        connector=CONNECTOR,
        # No source_db: Qlik names the schema and table, never the database.
        source_table=schema.source_table,
        row_key=row_key,
        before=before,
        after=after,
        unavailable_columns=unavailable,
        changed_columns=changed,
        source_ts_ms=parse_timestamp(headers.get("timestamp")),
        position=_position(op, headers, partition, offset),
        source_tx_id=_nonempty_text(headers.get("transactionId")),
        transaction_id=_nonempty_text(headers.get("transactionId")),
        transaction_total_order=_count(headers.get("transactionEventCounter")),
        transaction_event_count=_events_in_transaction(headers),
        qlik_schema_id=schema.schema_id,
    )


def _events_in_transaction(headers: Mapping[str, Any]) -> int | None:
    """The last event of a transaction (`transactionLastEvent` true) tells how many it has: its
    `transactionEventCounter`, which numbers the transaction's events from 1. None for the others."""
    last = headers.get("transactionLastEvent")
    is_last = last is True or (isinstance(last, str) and last.lower() == "true")
    return _count(headers.get("transactionEventCounter")) if is_last else None


def parse_unbound(body: Mapping[str, Any]) -> ParsedRecord:
    """A Qlik message met without its metadata: the first of the two parses.

    A metadata message is ignored (`metadata_message`) and names the `schemaId` it declares; a
    data message is held as `unknown_qlik_schema` and names the `messageSchemaId` it waits for
    (None when bare). The SQL then binds each held data message to its metadata message and
    parses it again with `parse_qlik_record`; one whose metadata never landed stays held, with
    this reason, until a build finds it. Raises `RecordError` for a malformed metadata message.
    """
    if body.get("magic") == MAGIC and body.get("type") not in (METADATA, DATA):
        raise RecordError(Reason.INVALID_ENVELOPE, f"envelope type {body.get('type')!r:.20} is not MD or DT")
    if is_metadata_message(body):
        schema = parse_metadata(body)
        return ignored(
            IgnoreClass.METADATA_MESSAGE,
            detail=f"{schema.source_table} schemaId {schema.schema_id}",
            qlik_schema_id=schema.schema_id,
        )
    schema_id = message_schema_id(body)
    waiting_for = f"schemaId {schema_id}" if schema_id else "its topic's only schemaId (a bare message names none)"
    return quarantined(
        RecordError(Reason.UNKNOWN_QLIK_SCHEMA, f"no metadata message with {waiting_for} has landed"),
        qlik_schema_id=schema_id,
    )


def parse_qlik_record(payload: str | None, metadata_payload: str | None, partition: int, offset: int) -> ParsedRecord:
    """One Qlik record's text, with the text of the metadata message the SQL bound it to.

    Never raises. Without a metadata text this is `parse_unbound`. A data message bound to a
    metadata message whose `schemaId` is not its `messageSchemaId` stays `unknown_qlik_schema`;
    a bare data message carries no id, so the metadata the caller bound it to is taken.
    """
    try:
        body = _qlik_body(payload)
        if metadata_payload is None or is_metadata_message(body):
            return parse_unbound(body)
        if body.get("magic") == MAGIC and body.get("type") != DATA:
            raise RecordError(Reason.INVALID_ENVELOPE, f"envelope type {body.get('type')!r:.20} is not MD or DT")
        schema_id = message_schema_id(body)
        schema = _schema_from_text(metadata_payload)
        if schema_id is not None and schema.schema_id != schema_id:
            raise RecordError(
                Reason.UNKNOWN_QLIK_SCHEMA, f"messageSchemaId {schema_id} bound to metadata {schema.schema_id}"
            )
        return parse_data(body, schema, partition, offset)
    except RecordError as error:
        return quarantined(error)
    except RecursionError:
        return quarantined(RecordError(Reason.INVALID_JSON, "nesting too deep"))


def parse_timestamp(value: Any) -> int | None:
    """`headers.timestamp` (`2019-11-11T09:13:04.067`, UTC) → epoch ms; None when empty or null.

    Qlik fills it for CDC operations only. A zone suffix, when present, is honoured; digits
    beyond the millisecond are cut, not rounded (the row's time never moves later).
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _TIMESTAMP.fullmatch(value):
        raise RecordError(Reason.INVALID_VALUE, f"timestamp {value!r:.60} is not YYYY-MM-DDTHH:MM:SS.fff")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as error:
        raise RecordError(Reason.INVALID_VALUE, f"timestamp {value!r:.60}: {error}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def _position(op: str, headers: Mapping[str, Any], partition: int, offset: int) -> str:
    # Qlik events order by `changeSequence` then `transactionEventCounter`, with REFRESH records
    # before every CDC record of the same key (docs/ordering-and-history.md#event-order). A
    # REFRESH has no source position (`changeSequence` is "" in the full load; Qlik fills it for
    # CDC operations only), so it takes the Kafka fallback `k:<partition>.<offset>`, and every
    # `k:` key sorts before every `s:` key as text ("k" < "s"): the full load comes first
    # whatever its offsets, and reloads of the same key keep their Kafka order among themselves.
    # It is the Kafka position even when a REFRESH does carry a changeSequence, so no full-load
    # row can sort after a CDC one. A CDC record: `s:` with changeSequence (35 digits, compared
    # as a number, never as text of another width) then transactionEventCounter (0 when absent).
    # A CDC record without a changeSequence has no known position and falls back to Kafka's; one
    # that is not a number is an invalid value rather than a silently wrong place in the order.
    sequence = headers.get("changeSequence")
    if op == OPS[REFRESH] or sequence is None or sequence == "":
        return positions.kafka_sort_key(partition, offset)
    counter = headers.get("transactionEventCounter")
    return positions.sort_key(
        positions.SOURCE_POSITION,
        (_position_number("changeSequence", sequence), _position_number("transactionEventCounter", counter or 0)),
    )


def _position_number(name: str, value: Any) -> int:
    """A position part as a number: digits, at most `_MAX_POSITION_DIGITS` once leading zeros go."""
    digits = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(digits, str) or not digits.isascii() or not digits.isdigit():
        raise RecordError(Reason.INVALID_VALUE, f"{name} {value!r:.60} is not a non-negative number")
    if len(digits.lstrip("0")) > _MAX_POSITION_DIGITS:
        raise RecordError(Reason.INVALID_VALUE, f"{name} has more than {_MAX_POSITION_DIGITS} digits")
    return int(digits)


def _changed_columns(
    op: str,
    change_mask: str | None,
    ordinals: Mapping[int, str],
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    unavailable: tuple[str, ...],
) -> tuple[tuple[str, ...] | None, int]:
    """The columns `changeMask` names, and its set bits without a column.

    A delete changes no column into anything (None, as for a Debezium delete). Without a mask
    (the full load), as for Debezium: all of a new row's columns, the columns an update with a
    full `beforeData` changed, else unknown (None).
    """
    if op == "d" or after is None:
        return None, 0
    if change_mask is not None:
        return columns_for_mask(change_mask, ordinals)
    if op in "cr":
        return tuple(after), 0
    if before is not None and before.keys() == after.keys():
        return tuple(name for name in after if name not in unavailable and after[name] != before[name]), 0
    return None, 0


def _row_key(schema: QlikTableSchema, data: Mapping[str, Any], unavailable: tuple[str, ...]) -> str:
    key_columns = schema.key_columns
    if not key_columns:
        raise RecordError(
            Reason.MISSING_KEY, f"{schema.source_table} (schemaId {schema.schema_id}) has no primaryKeyPosition"
        )
    missing = [name for name in key_columns if name not in data or name in unavailable]
    if missing:
        raise RecordError(Reason.MISSING_KEY, f"key columns not captured in data: {', '.join(missing)}")
    return json_text.canonical({name: data[name] for name in key_columns})


def _unknown_bits_note(change_bits: int, column_bits: int) -> str | None:
    """A change's detail counts mask bits that name no column (counted, never an error)."""
    if not change_bits and not column_bits:
        return None
    return f"mask bits without a column: changeMask {change_bits}, columnMask {column_bits}"


def _qlik_body(payload: str | None) -> Mapping[str, Any]:
    if payload is None:
        raise RecordError(Reason.NOT_AN_ENVELOPE, "a Qlik message cannot be null")
    body, _ = load_message(payload)
    if not isinstance(body, Mapping) or not is_qlik_message(body):
        raise RecordError(Reason.NOT_AN_ENVELOPE, "not a Qlik metadata or data message")
    return body


@lru_cache(maxsize=256)
def _schema_from_text(metadata_payload: str) -> QlikTableSchema:
    """Every data record of a table version brings the same metadata text: parse it once."""
    body = _qlik_body(metadata_payload)
    if not is_metadata_message(body):
        raise RecordError(Reason.UNKNOWN_QLIK_SCHEMA, "the message bound as metadata is a data message")
    return parse_metadata(body)


def _message(body: Mapping[str, Any]) -> Mapping[str, Any]:
    if body.get("magic") != MAGIC:
        return body
    message = body.get("message")
    if not isinstance(message, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, "a Replicate envelope whose message is not an object")
    return message


def _is_bare_metadata(body: Mapping[str, Any]) -> bool:
    return "schemaId" in body and isinstance(body.get("tableStructure"), Mapping)


def _is_bare_data(body: Mapping[str, Any]) -> bool:
    headers = body.get("headers")
    return "data" in body and isinstance(headers, Mapping) and "operation" in headers


def _column(schema_id: str, name: str, spec: Any) -> QlikColumn:
    ordinal = _count(spec.get("ordinal")) if isinstance(spec, Mapping) else None
    if not isinstance(spec, Mapping) or ordinal is None or ordinal < 1:
        raise RecordError(Reason.INVALID_ENVELOPE, f"Qlik metadata {schema_id}: column {name!r:.60} has no ordinal")
    return QlikColumn(
        name=name,
        ordinal=ordinal,
        type=_nonempty_text(spec.get("type")),
        length=_count(spec.get("length")),
        precision=_count(spec.get("precision")),
        scale=_count(spec.get("scale")),
        primary_key_position=_count(spec.get("primaryKeyPosition")) or 0,
    )


def _row_image(message: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    image = message.get(name)
    if image is None:
        return None
    if not isinstance(image, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} must be an object, not {type(image).__name__}")
    return image


def _mask(headers: Mapping[str, Any], name: str) -> str | None:
    mask = headers.get(name)
    if mask is None or isinstance(mask, str):
        return mask
    raise RecordError(Reason.INVALID_VALUE, f"{name} must be a hex string, not {type(mask).__name__}")


def _ordinal(column: QlikColumn) -> int:
    return column.ordinal


def _key_position(column: QlikColumn) -> int:
    return column.primary_key_position


def _count(value: Any) -> int | None:
    """A non-negative integer that fits Spark's `bigint`, as a JSON number or digits; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_BIGINT else None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= _MAX_COUNT_DIGITS:
        return int(value)
    return None


def _nonempty_text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)
