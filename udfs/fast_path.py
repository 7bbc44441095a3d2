"""The fast path of `udfs.records.parse_record`: the records a Debezium stream is mostly made of.

Nearly every record of a PostgreSQL change stream has one of four shapes: a row change of a
relational envelope, a transaction marker, a tombstone, each with or without the JsonConverter's
schema block (the same block on every message of a table). The general path
(`udfs.records.parse_record_generally`) reads every record through every rule of every format; here
those shapes are recognised by a few exact checks (`type(x) is int`, not `isinstance`) and their
records built directly, at about half the cost.

The general path stays the one definition of the rules. Each function here returns None for
anything it is not sure of, and the general path decides (and says why a record is refused). Most
rules are called, not copied (decoding a value by its schema, a decimal's text, the changed
columns, reading a text exactly); the few copied for speed are copied for their common values only
(a date's and a timestamp's text, a PostgreSQL position's sort key, a marker's counts, a field's
bigint check). `tests/unit/test_fast_path.py` compares every result of this path with the general
path's, byte for byte, over the hostile and shared corpora, generated records and mutations of
them, and each logical type it decodes with `udfs.logical_types` over the whole range of values.

State kept between records (recent schema blocks, row keys by key text, the texts of days and of
decimals) only saves work: every result is a function of the record alone, and each memory is
bounded. A Python worker parses one record at a time.
"""

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta
from decimal import Decimal
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
    decode_decimal,
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
_COMMON_SEQUENCE = re.compile(r'\["([1-9][0-9]{0,98})","([1-9][0-9]{0,98})"\]')
"""`_SEQUENCE` of two numbers written without a leading zero: their digits are their sort key's."""
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
        """Each block as the text before its payload, `{"schema":<block>,"payload":`, and its value."""

    def split(self, text: str) -> tuple[dict[str, Any], str] | None:
        """`(schema, payload text)` of a converter message, as `udfs.converter.load_message` cuts
        it; None for a message without a schema block, or one whose block is not an object."""
        # The most recent block alone first, and then no other check: nearly every message is a
        # run's next one, and a call of a str method costs about as much as comparing a whole
        # block. (Each block starts with `{"schema":`; a text that starts with one is not empty.)
        if self._blocks:
            prefix, schema = self._blocks[0]
            if text.startswith(prefix) and text[-1] == "}":
                return schema, text[len(prefix) : -1]
        if not (text.startswith(_SCHEMA_PREFIX) and text.endswith("}")):
            return None
        for index, (prefix, schema) in enumerate(self._blocks):
            # A block never holds `,"payload":` (it was cut at the first one) and ends with `}`,
            # so the separator right after it is the text's first: the cut load_message makes.
            if text.startswith(prefix):
                if index:  # the most recent first: a stream's messages come in runs of one table
                    self._blocks.insert(0, self._blocks.pop(index))
                return schema, text[len(prefix) : -1]
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
        self._blocks.insert(0, (_SCHEMA_PREFIX + block_text + _PAYLOAD_SEPARATOR, schema))
        del self._blocks[_RECENT_SCHEMAS:]
        return schema, payload_text


_KEY_SCHEMAS = RecentSchemas()
_VALUE_SCHEMAS = RecentSchemas()


def parse_common_record(key: str | None, payload: str | None, partition: int, offset: int) -> ParsedRecord | None:
    """The record of a common shape, as `parse_record_generally` makes it; None for any other."""
    try:
        if payload is None:
            return _tombstone(key)
        loaded = _loaded_object(payload, _VALUE_SCHEMAS)
        if loaded is None:
            return None
        body, body_text, schema = loaded
        if schema is None and "payload" in body:
            return None  # a converter message written otherwise: the general path decides
        # The general path reads a text again with `json` where orjson may have rounded a number,
        # and refuses one nested deeper than `json` reads: here no text is nested deep enough.
        # (A level opens and closes, so a text nests at most half its length deep: a short one,
        # a BEGIN marker's, needs no count.)
        if len(body_text) > 2 * _MAX_OPENINGS and body_text.count("{") + body_text.count("[") > _MAX_OPENINGS:
            return None
        if "op" in body:
            return _row_change(body, body_text, schema, key)
        if body.keys() <= _MARKER_FIELDS and body.get("status") in ("BEGIN", "END"):
            return _transaction_marker(body, schema)
        return None
    except RecordError:
        return None  # a value its schema refuses, or an unusual marker: the general path says why


_MAX_OPENINGS = 100
"""Objects and arrays a body may open (braces and brackets in its strings counted too): a value is
nested no deeper than the openings before it, and `json` reads 100 levels at any depth of calls a
parse runs at (its limit is the interpreter's, 1,000 calls).
Below that, the numbers orjson may have rounded are all the general path reads otherwise, and the
fast paths read none of them but the row images' (`_row_change`): every other member they output
is checked to be a string or an integer, and one of another type goes to the general path."""


def _loaded_object(text: str, schemas: RecentSchemas) -> tuple[dict[str, Any], str, dict[str, Any] | None] | None:
    """`(body, body text, schema)` of a message whose body (after its schema block, if it has one)
    orjson reads as an object; None for any other text."""
    split = schemas.split(text)
    schema, body_text = split if split is not None else (None, text)
    try:
        body = orjson.loads(body_text)
    except orjson.JSONDecodeError:
        return None
    if type(body) is not dict:
        return None
    return body, body_text, schema


def _load_message(text: str, schemas: RecentSchemas) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """`udfs.converter.load_message(text)` of a JSON object nested at most as deep as an array of
    objects in an object, converter-wrapped or not; None for any other text."""
    loaded = _loaded_object(text, schemas)
    if loaded is None:
        return None
    body, body_text, schema = loaded
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
    row_key = _canonical(decode_struct(*message)) if message is not None and message[0] else None
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


def _row_change(
    body: dict[str, Any], text: str, schema: dict[str, Any] | None, key_text: str | None
) -> ParsedRecord | None:
    """A row change of Debezium's PostgreSQL connector (`udfs.debezium.parse_envelope`)."""
    before, after = body.get("before"), body.get("after")
    if (type(before) is dict and not _EXACT_SCALARS.issuperset(map(type, before.values()))) or (
        type(after) is dict and not _EXACT_SCALARS.issuperset(map(type, after.values()))
    ):
        # A float in a row image may be a number orjson rounded: the text read as the general path
        # reads it. (`parse_common_record` saw that the text is nested shallowly enough for that.)
        body = json_text.exactly(text, body)
        before, after = body.get("before"), body.get("after")
        if (type(before) is dict and not _IMAGE_SCALARS.issuperset(map(type, before.values()))) or (
            type(after) is dict and not _IMAGE_SCALARS.issuperset(map(type, after.values()))
        ):
            return None  # an image with objects or arrays in it: the general path decodes them
    op, source = body["op"], body.get("source")
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
    if transaction is None:
        transaction = _NO_TRANSACTION
    elif type(transaction) is not dict:
        return None
    # The members written as text: a string, an integer, or none (`_text` of another type would
    # write a number orjson may have rounded, or a container's `repr`).
    source_db, tx_id, transaction_id = source.get("db"), source.get("txId"), transaction.get("id")
    if not _TEXT_TYPES.issuperset((type(source_db), type(tx_id), type(transaction_id))):
        return None
    position = _postgres_position(source)
    row_key = _row_keys.get(key_text) if key_text is not None else None
    if row_key is None:
        row_key = _row_key(key_text)
    if position is None or row_key is None:
        return None
    # The placeholder is rare: one look for it in C first (the values are scalars, so hashable).
    unavailable = () if not after or _UNAVAILABLE.isdisjoint(after.values()) else _unavailable_columns(after)
    last_schema, decoders = _last_image_decoders
    if schema is not last_schema:  # a stream's changes come in runs of one table: asked once a run
        decoders = _image_decoders(schema)
        _last_image_decoders[:] = schema, decoders
    before_decoders, after_decoders = decoders
    if before is not None and before_decoders:
        _decode_row(before, before_decoders)
    if after is not None and after_decoders:
        _decode_row(after, after_decoders)
    event_ts_ms, source_ts_ms, snapshot = body.get("ts_ms"), source.get("ts_ms"), source.get("snapshot")
    if type(event_ts_ms) is not int or not -MAX_TIMESTAMP_MS <= event_ts_ms <= MAX_TIMESTAMP_MS:
        event_ts_ms = None  # `_timestamp_ms`, written out: it is called twice a record
    if type(source_ts_ms) is not int or not -MAX_TIMESTAMP_MS <= source_ts_ms <= MAX_TIMESTAMP_MS:
        source_ts_ms = event_ts_ms
    # Every field of `ParsedRecord`, in order: built at once, not through keyword arguments.
    return _new_record(
        ParsedRecord,
        (
            _CHANGE,  # outcome
            None,  # ignore_class
            None,  # reason
            None,  # detail
            SOURCE_FORMAT,
            _POSTGRESQL,  # connector
            source_db if source_db is None or type(source_db) is str else str(source_db),  # `_text`
            f"{namespace}.{table}",  # source_table
            op,
            row_key,
            _dumps(before) if before is not None else None,  # before
            _dumps(after) if after is not None else None,  # after
            unavailable,  # unavailable_columns
            changed_columns(op, before, after, unavailable),
            source_ts_ms,  # the source's, else the event's
            event_ts_ms,
            position,
            source["lsn"],  # source_lsn: `_postgres_position` checked it fits a bigint
            tx_id if tx_id is None or type(tx_id) is str else str(tx_id),  # source_tx_id, `_text`
            snapshot if type(snapshot) is str else _snapshot_flag(snapshot),  # source_snapshot
            transaction_id if transaction_id is None or type(transaction_id) is str else str(transaction_id),
            _bigint(transaction.get("total_order")),  # transaction_total_order
            _bigint(transaction.get("data_collection_order")),  # transaction_data_collection_order
            None,  # patch
            None,  # transaction_status
            None,  # transaction_event_count
            None,  # transaction_collection_counts
            None,  # qlik_schema_id
        ),
    )


def _dumps(row: dict[str, Any]) -> str:
    """`json_text.dumps(row)`: orjson's text where it writes every value, as it does but for a
    Decimal or an integer beyond 64 bits (which `json_text.dumps` writes itself)."""
    try:
        return _orjson_dumps(row).decode()
    except TypeError:
        return json_text.dumps(row)


def _canonical(value: dict[str, Any]) -> str:
    """`json_text.canonical(value)`, as `_dumps` writes `json_text.dumps`: orjson's text, keys
    sorted, where it writes every value."""
    try:
        return _orjson_dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return json_text.canonical(value)


_orjson_dumps = orjson.dumps
_new_record = tuple.__new__
"""What a named tuple's `_make` does, without its call: the record from every field, in order."""
_NO_TRANSACTION: dict[str, Any] = {}
_TEXT_TYPES = frozenset({str, int, NoneType})
_IMAGE_SCALARS = _SCALARS | {Decimal}
"""The values of a row image read exactly: a fraction a double cannot hold is a Decimal."""

Decoder = Callable[[Any], str | None]
"""A logical type's decoder for its common values: their text, or None for any other value (which
`decode_value` then decodes, or refuses)."""
_FieldDecoders = tuple[tuple[str, Mapping[str, Any], Decoder | None], ...]
"""A row image's fields to decode: name, field schema, and its common values' decoder if any."""


_last_image_decoders: list[Any] = [None, ((), ())]
"""The schema last asked about and its `_image_decoders`."""


@memoized_per_schema
def _image_decoders(schema: dict[str, Any] | None) -> tuple[_FieldDecoders, _FieldDecoders]:
    """The fields the `before` and the `after` image of an envelope's schema decode
    (`fields_to_decode`), each with its schema and a decoder of its common values, if it has one."""
    field_schemas = struct_field_schemas(schema)
    return _field_decoders(field_schemas.get("before")), _field_decoders(field_schemas.get("after"))


def _field_decoders(image_schema: Any) -> _FieldDecoders:
    return tuple(
        (name, field_schema, _common_decoder(field_schema))
        for name, field_schema in fields_to_decode(image_schema).items()
    )


def _common_decoder(field_schema: Mapping[str, Any]) -> Decoder | None:
    name = field_schema.get("name")
    if name == _DECIMAL:
        return _decimal_decoder(field_schema)
    return _DECODERS.get(name) if type(name) is str else None


def _decode_row(image: dict[str, Any], decoders: _FieldDecoders) -> None:
    """`decode_struct` of an image, in place (the image is this path's own reading): each value
    a field's common decoder takes by it (`_image_decoders`), any other by `decode_value`."""
    for name, field_schema, decoder in decoders:
        if name in image:
            value = image[name]
            text = decoder(value) if decoder is not None else None
            image[name] = text if text is not None else decode_value(value, field_schema, name)


def _date(days: Any) -> str | None:
    """`logical_types.format_date` of a date in the datetime module's years, 1 to 9999."""
    if type(days) is not int or not _MIN_DAYS <= days <= _MAX_DAYS:
        return None
    text = _days.get(days)
    return text if text is not None else _day(days)


def _milli_timestamp(millis: Any) -> str | None:
    """`logical_types.format_timestamp(millis, 3)` of a time in the datetime module's years."""
    if type(millis) is not int or not _MIN_DAYS * _MILLIS_PER_DAY <= millis < (_MAX_DAYS + 1) * _MILLIS_PER_DAY:
        return None
    days, millis_of_day = divmod(millis, _MILLIS_PER_DAY)
    seconds, fraction = divmod(millis_of_day, 1_000)
    minute, second = divmod(seconds, 60)
    day = _days.get(days)
    return f"{day if day is not None else _day(days)}T{_CLOCK[minute]}:{_SECONDS[second]}.{fraction:03d}"


def _micro_timestamp(micros: Any) -> str | None:
    """`logical_types.format_timestamp(micros, 6)` of a time in the datetime module's years."""
    if type(micros) is not int or not _MIN_DAYS * _MICROS_PER_DAY <= micros < (_MAX_DAYS + 1) * _MICROS_PER_DAY:
        return None
    days, micros_of_day = divmod(micros, _MICROS_PER_DAY)
    seconds, fraction = divmod(micros_of_day, 1_000_000)
    minute, second = divmod(seconds, 60)
    day = _days.get(days)
    return f"{day if day is not None else _day(days)}T{_CLOCK[minute]}:{_SECONDS[second]}.{fraction:06d}"


def _day(days: int) -> str:
    """A day's text, `YYYY-MM-DD` (`logical_types.format_date`), remembered: a stream's dates and
    timestamps fall on few days, and the datetime module takes longer to write one than the rest of
    a timestamp does (a pure function of `days`: the memory only saves work)."""
    text = (_EPOCH_DATE + timedelta(days=days)).isoformat()
    if len(_days) >= _VALUES_REMEMBERED:
        _days.clear()
    _days[days] = text
    return text


_VALUES_REMEMBERED = 4096
_days: dict[int, str] = {}
_CLOCK = [f"{hour:02d}:{minute:02d}" for hour in range(24) for minute in range(60)]
"""`HH:MM` of each minute of a day."""
_SECONDS = [f"{second:02d}" for second in range(60)]


def _decimal_decoder(field_schema: Mapping[str, Any]) -> Decoder | None:
    """`decode_value` of a Kafka Connect Decimal's base64 text, by `logical_types.decode_decimal`,
    its scale read once (as `logical_types` reads it); None for a schema whose scale it refuses."""
    parameters = field_schema.get("parameters") or {}
    try:
        scale = int(parameters.get("scale", 0)) if type(parameters) is dict else None
    except (ValueError, TypeError, OverflowError):
        scale = None
    if scale is None:
        return None

    def decimal_text(value: Any) -> str | None:
        if type(value) is not str or value in _UNAVAILABLE:
            return None  # a number (`decimal.format=NUMERIC`), or the placeholder `decode_value` keeps
        # Remembered by its base64 and scale (a pure function of them): prices and amounts repeat.
        text = _decimals.get((value, scale))
        if text is None:
            try:
                text = decode_decimal(value, scale)
            except ValueError:  # not base64 (binascii.Error is one), or a scale beyond PostgreSQL's
                return None  # `decode_value` refuses it, and says why
            if len(_decimals) >= _VALUES_REMEMBERED:
                _decimals.clear()
            _decimals[value, scale] = text
        return text

    return decimal_text


_decimals: dict[tuple[str, int], str] = {}


_EPOCH = datetime(1970, 1, 1)
_EPOCH_DATE = _EPOCH.date()
_MIN_DAYS = (date.min - _EPOCH_DATE).days
_MAX_DAYS = (date.max - _EPOCH_DATE).days
_MILLIS_PER_DAY = 86_400_000
_MICROS_PER_DAY = 86_400_000_000
_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_DECODERS: dict[Any, Decoder] = {
    "io.debezium.time.Date": _date,
    "org.apache.kafka.connect.data.Date": _date,
    "io.debezium.time.Timestamp": _milli_timestamp,
    "org.apache.kafka.connect.data.Timestamp": _milli_timestamp,
    "io.debezium.time.MicroTimestamp": _micro_timestamp,
}
"""The common logical types of integers, by schema name: their text (as `logical_types` writes it:
dates `YYYY-MM-DD`, times `HH:MM:SS` and 3 or 6 fraction digits), None for a value not an integer
or beyond the years 1-9999."""


def _unavailable_columns(after: dict[str, Any]) -> tuple[str, ...]:
    return tuple(name for name, value in after.items() if is_unavailable(value))


def _postgres_position(source: dict[str, Any]) -> str | None:
    """`positions.postgres_position`'s sort key (`positions.sort_key`), written at once, for an
    `lsn` that fits a bigint and a `sequence` as the connector writes it (or none); else None."""
    lsn, sequence = source.get("lsn"), source.get("sequence")
    if type(lsn) is not int or not 0 <= lsn <= MAX_BIGINT:
        return None
    lsn_digits = str(lsn)  # no leading zero: its own sort key part
    if sequence is None:
        return _SOURCE_PREFIX + _DIGIT_COUNTS[len(lsn_digits)] + lsn_digits
    if type(sequence) is not str:
        return None
    match = _COMMON_SEQUENCE.fullmatch(sequence)
    if match is not None:  # two numbers, each its own sort key part
        last_commit, current = match.groups()
        return (
            f"{_SOURCE_PREFIX}{_DIGIT_COUNTS[len(lsn_digits)]}{lsn_digits}"
            f".{_DIGIT_COUNTS[len(last_commit)]}{last_commit}.{_DIGIT_COUNTS[len(current)]}{current}"
        )
    match = _SEQUENCE.fullmatch(sequence)
    if match is None:
        return None
    last_commit, current = match.groups()
    lsn_part = _DIGIT_COUNTS[len(lsn_digits)] + lsn_digits
    return f"{_SOURCE_PREFIX}{lsn_part}.{_sort_key_part(last_commit)}.{_sort_key_part(current)}"


def _sort_key_part(digits: str | None) -> str:
    """A number's part of a sort key from its ASCII digits; null is 0, as in `positions`."""
    if digits is None:
        return _ZERO_PART
    if digits[0] != "0":  # the digits of int(digits) already (the connector writes no leading zero)
        return _DIGIT_COUNTS[len(digits)] + digits
    number = digits.lstrip("0") or "0"  # the digits of int(digits)
    return _DIGIT_COUNTS[len(number)] + number


_SOURCE_PREFIX = positions.SOURCE_POSITION + ":"
_DIGIT_COUNTS = [f"{count:02d}" for count in range(positions.MAX_DIGITS + 1)]
"""A number's digit count as its sort key part starts: two digits (`positions.sort_key`)."""
_ZERO_PART = _DIGIT_COUNTS[1] + "0"


def _transaction_marker(body: dict[str, Any], schema: dict[str, Any] | None) -> ParsedRecord | None:
    """`udfs.transactions.parse_transaction_marker` of a body the general path takes for a marker
    (its fields are a marker's alone, so it is no envelope nor Qlik message, and its schema does
    not make it a flattened record) with a text id, and for an END valid counts; else None."""
    status, transaction_id = body["status"], body.get("id")
    if type(transaction_id) is not str or not transaction_id:
        return None
    last_schema, makes_flattened = _last_makes_flattened
    if schema is not last_schema:  # asked once a run of one topic's markers
        makes_flattened = _makes_flattened(schema)
        _last_makes_flattened[:] = schema, makes_flattened
    if makes_flattened:
        return None
    event_count, collection_counts = None, None
    if status == "END":
        event_count, counts = body.get("event_count"), _collection_counts(body.get("data_collections"))
        if not _is_count(event_count) or counts is None:
            return None
        collection_counts = _canonical(counts)
    # Every field of `ParsedRecord`, in order.
    return _new_record(
        ParsedRecord,
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
        ),
    )


_last_makes_flattened: list[Any] = [None, False]
"""The schema last asked about and its `_makes_flattened` (none makes none flattened)."""


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
