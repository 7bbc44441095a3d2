"""The fast path of `udfs.records.parse_record`: the records a Debezium stream is mostly made of.

Nearly every record of a PostgreSQL change stream has one of four shapes: a row change of a
relational envelope, a transaction marker, a tombstone, each with or without the JsonConverter's
schema block (the same block on every message of a table). The general path
(`udfs.records.parse_record_generally`) reads every record through every rule of every format; here
those shapes are recognised by a few exact checks (`type(x) is int`, not `isinstance`) and their
records built directly, at about half the cost.

The general path stays the one definition of the rules. Each function here returns None for
anything it is not sure of, and the general path decides (and says why a record is refused). Most
rules are called, not copied (decoding a value by its schema, the changed columns, the text of a
row image); the few copied for speed are copied for their common values only (a timestamp's text
by one datetime call, a PostgreSQL position's sort key, a marker's counts, a field's bigint
check). `tests/unit/test_fast_path.py` compares every result of this path with the general path's,
byte for byte, over the hostile and shared corpora, generated records and mutations of them.

State kept between records (recent schema blocks, row keys by key text) only saves work: every
result is a function of the record alone. A Python worker parses one record at a time.
"""

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from types import NoneType
from typing import Any, TypeGuard

import orjson

from udfs import json_text, positions
from udfs.converter import converter_parts, load_schema
from udfs.debezium import MAX_BIGINT, MAX_TIMESTAMP_MS, SOURCE_FORMAT, changed_columns
from udfs.events import ParsedRecord
from udfs.flattened import is_flattened
from udfs.logical_types import (
    UNAVAILABLE_BYTES,
    UNAVAILABLE_VALUE,
    decode_struct,
    decode_value,
    fields_to_decode,
    is_unavailable,
    memoized_per_schema,
    struct_field_schemas,
)
from udfs.reasons import IgnoreClass, Outcome, RecordError

_SCHEMA_PREFIX = '{"schema":'
_PAYLOAD_SEPARATOR = ',"payload":'
_RECENT_SCHEMAS = 8
"""Schema blocks remembered per kind of text (keys, values): more than the tables of a stream's
partition, whose messages come interleaved."""

_SCALARS = frozenset({str, int, float, bool, NoneType})
_EXACT_SCALARS = _SCALARS - {float}
"""The JSON values orjson reads exactly: a float may be a number it rounded, or an integer beyond
64 bits."""
_ROW_OPS = ("c", "r", "u", "d")
_POSTGRESQL = "postgresql"
_SEQUENCE = re.compile(r'\[(?:null|"([0-9]{1,99})"),(?:null|"([0-9]{1,99})")\]')
"""`source.sequence` as Debezium's PostgreSQL connector writes it: `["<last commit lsn>","<lsn>"]`,
either of them null. ASCII digits only, as `positions` takes them."""
_MARKER_FIELDS = frozenset({"status", "id", "event_count", "data_collections", "ts_ms"})
"""Every field of a transaction marker, and none of a row change, flattened record or Qlik message."""

_UNAVAILABLE = frozenset({UNAVAILABLE_VALUE, UNAVAILABLE_BYTES})
_CHANGE = Outcome.CHANGE.value
_IGNORED = Outcome.IGNORED.value
_TOMBSTONE = IgnoreClass.TOMBSTONE.value
_TRANSACTION_MARKER = IgnoreClass.TRANSACTION_MARKER.value


class RecentSchemas:
    """The schema blocks of the last few JsonConverter messages of one kind, as text and value.

    A table's messages all carry the same block, about 2 KB of the text. Comparing a message's
    start with a block seen before (one `startswith`, a memory comparison) finds the cut without
    searching the text for `,"payload":` and without hashing the block to look its value up.
    """

    def __init__(self) -> None:
        self._blocks: list[tuple[str, dict[str, Any]]] = []

    def split(self, text: str) -> tuple[dict[str, Any], str] | None:
        """`(schema, payload text)` of a converter message, as `udfs.converter.load_message` cuts
        it; None for a message without a schema block, or one whose block is not an object."""
        start = len(_SCHEMA_PREFIX)
        if not (text.startswith(_SCHEMA_PREFIX) and text.endswith("}")):
            return None
        for index, (block_text, schema) in enumerate(self._blocks):
            # A block never holds `,"payload":` (it was cut at the first one) and ends with `}`,
            # so the separator right after it is the text's first: the cut load_message makes.
            cut = start + len(block_text)
            if text.startswith(block_text, start) and text.startswith(_PAYLOAD_SEPARATOR, cut):
                if index:  # the most recent first: a stream's messages come in runs of one table
                    self._blocks.insert(0, self._blocks.pop(index))
                return schema, text[cut + len(_PAYLOAD_SEPARATOR) : -1]
        parts = converter_parts(text)
        if parts is None:
            return None
        block_text, payload_text = parts
        try:
            schema = load_schema(block_text)
        except RecordError:
            return None
        if type(schema) is not dict:
            return None
        self._blocks.insert(0, (block_text, schema))
        del self._blocks[_RECENT_SCHEMAS:]
        return schema, payload_text


_KEY_SCHEMAS = RecentSchemas()
_VALUE_SCHEMAS = RecentSchemas()


def parse_common_record(key: str | None, payload: str | None, partition: int, offset: int) -> ParsedRecord | None:
    """The record of a common shape, as `parse_record_generally` makes it; None for any other."""
    try:
        if payload is None:
            return _tombstone(key)
        message = _load_message(payload, _VALUE_SCHEMAS)
        if message is None:
            return None
        body, schema = message
        if "op" in body:
            return _row_change(body, schema, key)
        if body.keys() <= _MARKER_FIELDS and body.get("status") in ("BEGIN", "END"):
            return _transaction_marker(body, schema)
        return None
    except RecordError:
        return None  # a value its schema refuses, or an unusual marker: the general path says why


def _load_message(text: str, schemas: RecentSchemas) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """`udfs.converter.load_message(text)` of a JSON object nested at most as deep as an array of
    objects in an object, converter-wrapped or not; None for any other text."""
    split = schemas.split(text)
    schema, body_text = split if split is not None else (None, text)
    try:
        body = orjson.loads(body_text)
    except orjson.JSONDecodeError:
        return None
    if type(body) is not dict:
        return None
    exact_body = _read_exactly(body, body_text)
    if exact_body is None or (schema is None and "payload" in exact_body):
        return None  # nested deeper, or a converter message written otherwise: the general path decides
    return exact_body, schema


def _read_exactly(body: dict[str, Any], text: str) -> dict[str, Any] | None:
    """`json_text.loads(text)`, given orjson's reading of it, for an object nested at most as deep
    as an array of objects in an object; None for one nested deeper.

    Nearly always an object of scalars and objects of scalars: then nothing nests deep enough for
    a reader to refuse it, and unless one is a float, orjson rounded none. One C loop an object.
    """
    floats = False
    for value in body.values():
        kind = type(value)
        if kind is dict:
            if not _EXACT_SCALARS.issuperset(map(type, value.values())):
                if not _SCALARS.issuperset(map(type, value.values())):
                    return None  # nested deeper: the general path knows how deep is too deep
                floats = True
        elif kind is list:
            # An array of objects of scalars (an END marker's `data_collections`), or of scalars.
            for item in value:
                item_values = item.values() if type(item) is dict else (item,)
                if not _EXACT_SCALARS.issuperset(map(type, item_values)):
                    if not _SCALARS.issuperset(map(type, item_values)):
                        return None  # nested deeper: the general path knows how deep is too deep
                    floats = True
        elif kind is float:
            floats = True
    return _without_rounding(body, text) if floats else body


def _without_rounding(body: dict[str, Any], text: str) -> dict[str, Any]:
    """A float may be a number orjson rounded (or an integer it read as one): the text read as the
    general path reads it."""
    exact: dict[str, Any] = json_text.exactly(text, body)
    return exact


def _row_key(key_text: str | None) -> str | None:
    """`udfs.keys.row_key_from_kafka_key` of a key that is a JSON object of scalars, else None.

    Remembered by the key's text (a pure function of it): a key's events come close together.
    """
    if key_text is None:
        return None
    if key_text in _row_keys:
        return _row_keys[key_text]
    message = _load_message(key_text, _KEY_SCHEMAS)
    row_key = json_text.canonical(decode_struct(*message)) if message is not None and message[0] else None
    if len(_row_keys) >= _ROW_KEYS_REMEMBERED:
        _row_keys.clear()
    _row_keys[key_text] = row_key
    return row_key


_ROW_KEYS_REMEMBERED = 4096
_row_keys: dict[str, str | None] = {}


def _tombstone(key_text: str | None) -> ParsedRecord | None:
    row_key = _row_key(key_text)
    if row_key is None:
        return None  # no key, or an unusual one: the general path says what its tombstone keeps
    return ParsedRecord(_IGNORED, _TOMBSTONE, row_key=row_key)


def _row_change(body: dict[str, Any], schema: dict[str, Any] | None, key_text: str | None) -> ParsedRecord | None:
    """A row change of Debezium's PostgreSQL connector (`udfs.debezium.parse_envelope`)."""
    op, source, before, after = body["op"], body.get("source"), body.get("before"), body.get("after")
    if (
        op not in _ROW_OPS
        or type(source) is not dict
        or source.get("connector") != _POSTGRESQL
        or (type(before) is not dict and before is not None)
        or (type(after) is not dict if op != "d" else after is not None)
    ):
        return None
    table, namespace, transaction = source.get("table"), source.get("schema"), body.get("transaction")
    if type(table) is not str or not table or type(namespace) is not str or not namespace or "collection" in source:
        return None
    if type(transaction) is not dict and transaction is not None:
        return None
    position = _postgres_position(source)
    row_key = _row_key(key_text)
    if position is None or row_key is None:
        return None
    # The placeholder is rare: one look for it in C first (the values are scalars, so hashable).
    unavailable = () if not after or _UNAVAILABLE.isdisjoint(after.values()) else _unavailable_columns(after)
    before_fields, after_fields = _image_fields_to_decode(schema)
    before_row = _decode_row(before, before_fields) if before is not None else None
    after_row = _decode_row(after, after_fields) if after is not None else None
    event_ts_ms = _timestamp_ms(body.get("ts_ms"))
    source_ts_ms = _timestamp_ms(source.get("ts_ms"))
    transaction = transaction or {}
    # Every field of `ParsedRecord`, in order: built at once, not through keyword arguments.
    return ParsedRecord._make(
        (
            _CHANGE,  # outcome
            None,  # ignore_class
            None,  # reason
            None,  # detail
            SOURCE_FORMAT,
            _POSTGRESQL,  # connector
            _text(source.get("db")),  # source_db
            f"{namespace}.{table}",  # source_table
            op,
            row_key,
            json_text.dumps(before_row) if before_row is not None else None,  # before
            json_text.dumps(after_row) if after_row is not None else None,  # after
            unavailable,  # unavailable_columns
            changed_columns(op, before_row, after_row, unavailable),
            source_ts_ms if source_ts_ms is not None else event_ts_ms,  # source_ts_ms
            event_ts_ms,
            position,
            source["lsn"],  # source_lsn: `_postgres_position` checked it fits a bigint
            _text(source.get("txId")),  # source_tx_id
            _snapshot_flag(source.get("snapshot")),  # source_snapshot
            _text(transaction.get("id")),  # transaction_id
            _bigint(transaction.get("total_order")),  # transaction_total_order
            _bigint(transaction.get("data_collection_order")),  # transaction_data_collection_order
            None,  # patch
            None,  # transaction_status
            None,  # transaction_event_count
            None,  # transaction_collection_counts
            None,  # qlik_schema_id
        )
    )


@memoized_per_schema
def _image_fields_to_decode(schema: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """`fields_to_decode` of the `before` and of the `after` image of an envelope's schema."""
    field_schemas = struct_field_schemas(schema)
    return fields_to_decode(field_schemas.get("before")), fields_to_decode(field_schemas.get("after"))


def _decode_row(image: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """`decode_struct` of an image whose `fields_to_decode` are `fields`, in place (the image is
    this path's own reading): a value of a common logical type decoded by one call of the
    datetime module (`_DECODERS`), any other by `decode_value`."""
    for name, field_schema in fields.items():
        if name in image:
            value = image[name]
            decoder = _DECODERS.get(field_schema.get("name")) if type(value) is int else None
            text = decoder(value) if decoder is not None else None
            image[name] = text if text is not None else decode_value(value, field_schema, name)
    return image


def _date(days: int) -> str | None:
    """`logical_types.format_date` of a date in the datetime module's years, 1 to 9999."""
    return (_EPOCH_DATE + timedelta(days=days)).isoformat() if _MIN_DAYS <= days <= _MAX_DAYS else None


def _milli_timestamp(millis: int) -> str | None:
    """`logical_types.format_timestamp(millis, 3)` of a time in the datetime module's years."""
    if not _MIN_DAYS * _MILLIS_PER_DAY <= millis < (_MAX_DAYS + 1) * _MILLIS_PER_DAY:
        return None
    return (_EPOCH + timedelta(milliseconds=millis)).isoformat(timespec="milliseconds")


def _micro_timestamp(micros: int) -> str | None:
    """`logical_types.format_timestamp(micros, 6)` of a time in the datetime module's years."""
    if not _MIN_DAYS * _MICROS_PER_DAY <= micros < (_MAX_DAYS + 1) * _MICROS_PER_DAY:
        return None
    return (_EPOCH + timedelta(microseconds=micros)).isoformat(timespec="microseconds")


_EPOCH = datetime(1970, 1, 1)
_EPOCH_DATE = _EPOCH.date()
_MIN_DAYS = (date.min - _EPOCH_DATE).days
_MAX_DAYS = (date.max - _EPOCH_DATE).days
_MILLIS_PER_DAY = 86_400_000
_MICROS_PER_DAY = 86_400_000_000
_DECODERS: dict[Any, Callable[[int], str | None]] = {
    "io.debezium.time.Date": _date,
    "org.apache.kafka.connect.data.Date": _date,
    "io.debezium.time.Timestamp": _milli_timestamp,
    "org.apache.kafka.connect.data.Timestamp": _milli_timestamp,
    "io.debezium.time.MicroTimestamp": _micro_timestamp,
}
"""The common logical types of integers, by schema name: their text (as `logical_types` writes it:
dates `YYYY-MM-DD`, times `HH:MM:SS` and 3 or 6 fraction digits), None beyond the years 1-9999."""


def _unavailable_columns(after: dict[str, Any]) -> tuple[str, ...]:
    return tuple(name for name, value in after.items() if is_unavailable(value))


def _postgres_position(source: dict[str, Any]) -> str | None:
    """`positions.postgres_position`'s sort key (`positions.sort_key`), written at once, for an
    `lsn` that fits a bigint and a `sequence` as the connector writes it (or none); else None."""
    lsn, sequence = source.get("lsn"), source.get("sequence")
    if type(lsn) is not int or not 0 <= lsn <= MAX_BIGINT:
        return None
    if sequence is None:
        return _SOURCE_PREFIX + _sort_key_part(str(lsn))
    match = _SEQUENCE.fullmatch(sequence) if type(sequence) is str else None
    if match is None:
        return None
    last_commit, current = match.groups()
    return f"{_SOURCE_PREFIX}{_sort_key_part(str(lsn))}.{_sort_key_part(last_commit)}.{_sort_key_part(current)}"


def _sort_key_part(digits: str | None) -> str:
    """A number's part of a sort key from its ASCII digits; null is 0, as in `positions`."""
    number = digits.lstrip("0") or "0" if digits is not None else "0"  # the digits of int(digits)
    return _DIGIT_COUNTS[len(number)] + number


_SOURCE_PREFIX = positions.SOURCE_POSITION + ":"
_DIGIT_COUNTS = [f"{count:02d}" for count in range(positions.MAX_DIGITS + 1)]
"""A number's digit count as its sort key part starts: two digits (`positions.sort_key`)."""


def _transaction_marker(body: dict[str, Any], schema: dict[str, Any] | None) -> ParsedRecord | None:
    """`udfs.transactions.parse_transaction_marker` of a body the general path takes for a marker
    (its fields are a marker's alone, so it is no envelope nor Qlik message, and its schema does
    not make it a flattened record) with a text id, and for an END valid counts; else None."""
    status, transaction_id = body["status"], body.get("id")
    if type(transaction_id) is not str or not transaction_id or _makes_flattened(schema):
        return None
    event_count, collection_counts = None, None
    if status == "END":
        event_count, counts = body.get("event_count"), _collection_counts(body.get("data_collections"))
        if not _is_count(event_count) or counts is None:
            return None
        collection_counts = json_text.canonical(counts)
    # Every field of `ParsedRecord`, in order.
    return ParsedRecord._make(
        (
            _IGNORED,  # outcome
            _TRANSACTION_MARKER,  # ignore_class
            None,  # reason
            f"{status} {transaction_id}",  # detail
            None,  # source_format
            None,  # connector
            None,  # source_db
            None,  # source_table
            None,  # op
            None,  # row_key
            None,  # before
            None,  # after
            (),  # unavailable_columns
            None,  # changed_columns
            None,  # source_ts_ms
            _timestamp_ms(body.get("ts_ms")),  # event_ts_ms
            None,  # position
            None,  # source_lsn
            None,  # source_tx_id
            None,  # source_snapshot
            transaction_id,
            None,  # transaction_total_order
            None,  # transaction_data_collection_order
            None,  # patch
            status,  # transaction_status
            event_count,  # transaction_event_count
            collection_counts,  # transaction_collection_counts
            None,  # qlik_schema_id
        )
    )


@memoized_per_schema
def _makes_flattened(schema: dict[str, Any] | None) -> bool:
    """`is_flattened(body, schema)` of a body with none of an envelope's or a flattened record's
    fields (a marker's): what its schema alone says, once per schema."""
    return is_flattened({}, schema)


def _collection_counts(collections: Any) -> dict[str, int] | None:
    """An END marker's `data_collections` as `{data_collection: event_count}`, when each entry is
    an object of a new name and a count; None for any other."""
    if collections is None:
        return {}
    if type(collections) is not list:
        return None
    counts: dict[str, int] = {}
    for entry in collections:
        name = entry.get("data_collection") if type(entry) is dict else None
        count = entry.get("event_count") if type(entry) is dict else None
        if type(name) is not str or name in counts or not _is_count(count):
            return None
        counts[name] = count
    return counts


def _is_count(value: Any) -> TypeGuard[int]:
    return type(value) is int and 0 <= value <= MAX_BIGINT


def _timestamp_ms(value: Any) -> int | None:
    """`udfs.debezium.timestamp_ms_field` (which is None for any value but an integer)."""
    return value if type(value) is int and -MAX_TIMESTAMP_MS <= value <= MAX_TIMESTAMP_MS else None


def _bigint(value: Any) -> int | None:
    """`udfs.debezium.int_field`."""
    return value if type(value) is int and -MAX_BIGINT - 1 <= value <= MAX_BIGINT else None


def _text(value: Any) -> str | None:
    """`udfs.debezium.text_field`."""
    return value if value is None or type(value) is str else str(value)


def _snapshot_flag(snapshot: Any) -> str | None:
    """`udfs.debezium.snapshot_flag`."""
    if type(snapshot) is str:
        return snapshot
    if type(snapshot) is bool:
        return "true" if snapshot else "false"
    return None
