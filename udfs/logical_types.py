"""Decode Kafka Connect / Debezium logical types into the row JSON of the output tables.

A value arrives as JsonConverter writes it (an int for a date, base64 for a decimal, ...) next to
its field schema. Decoding needs the schema: without one (schemas.enable=false) values pass
through unchanged, because e.g. an int cannot be told apart from a date.

Formats, fixed so that consumers can cast them with Spark directly:
- dates `YYYY-MM-DD`; times `HH:MM:SS.fff` (ms), `.ffffff` (µs), `.fffffffff` (ns);
- timestamps without zone `YYYY-MM-DDTHH:MM:SS.fff` with the same fraction widths;
- zoned values are already ISO-8601 strings and are kept;
- decimals as JSON strings with exactly their scale ("12.50"), never through a float, whether
  the converter wrote base64 bytes or (`decimal.format=NUMERIC`) a JSON number.
"""

import base64
import binascii
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from decimal import Context, Decimal, Inexact, InvalidOperation
from typing import Any, TypeVar

from udfs.reasons import Reason, RecordError

UNAVAILABLE_VALUE = "__debezium_unavailable_value"
"""Debezium's placeholder for a value it could not read (PostgreSQL TOAST): keep the previous."""

UNAVAILABLE_BYTES = base64.b64encode(UNAVAILABLE_VALUE.encode()).decode()
"""The placeholder in a bytes column, as JsonConverter writes bytes: base64."""

MAX_DECIMAL_SCALE = 16_383
"""PostgreSQL's widest numeric scale; a wider one is a damaged schema, whose text would not fit
in memory (a scale of a billion pads a billion zeros)."""
_EXACT = Context(prec=131_072 + MAX_DECIMAL_SCALE, traps=[Inexact, InvalidOperation])
"""Decimal arithmetic that refuses to round, as wide as PostgreSQL's widest numeric."""

_EPOCH = date(1970, 1, 1)
_MS_PER_DAY = 86_400_000

Schema = Mapping[str, Any]
_Result = TypeVar("_Result")

_MAX_MEMOIZED_SCHEMAS = 4096
_CONTAINER_TYPES = frozenset({"struct", "array", "map"})


def is_unavailable(value: Any) -> bool:
    """True for the TOAST placeholder, in its string or its bytes (base64) form."""
    return value in (UNAVAILABLE_VALUE, UNAVAILABLE_BYTES)


def decode_struct(value: Mapping[str, Any], schema: Schema | None) -> dict[str, Any]:
    """Decode every field of a struct value by its field schema, keeping the field order."""
    row = dict(value)
    for name, field_schema in fields_to_decode(schema).items():
        if name in row:
            row[name] = decode_value(row[name], field_schema, name)
    return row


def memoized_per_schema(function: Callable[[Any], _Result]) -> Callable[[Any], _Result]:
    """Memoize a function of a schema by the schema object's identity.

    The converter's schemas are shared objects, one per distinct schema text (`udfs.converter`),
    so every message of a table asks about the same objects. A memo entry holds its schema, so no
    other object can take that identity while the entry lives. Callers must not change a result.
    """
    memo: dict[int, tuple[Any, _Result]] = {}

    def memoized(schema: Any) -> _Result:
        entry = memo.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        result = function(schema)
        if len(memo) >= _MAX_MEMOIZED_SCHEMAS:
            memo.clear()
        memo[id(schema)] = (schema, result)
        return result

    return memoized


@memoized_per_schema
def struct_field_schemas(schema: Any) -> dict[str, Schema]:
    """A struct schema's field schemas by field name. A schema is metadata the converter writes:
    what is not a list of objects with a `field` name (a hand-made or damaged schema) is left out,
    and the values it would have described pass through undecoded."""
    fields = schema.get("fields") if isinstance(schema, Mapping) else None
    if not isinstance(fields, list):
        return {}
    return {
        field["field"]: field for field in fields if isinstance(field, Mapping) and isinstance(field.get("field"), str)
    }


@memoized_per_schema
def fields_to_decode(schema: Any) -> dict[str, Schema]:
    """The field schemas under which `decode_value` may change a value; it keeps all the others."""
    field_schemas = struct_field_schemas(schema)
    return {name: field_schema for name, field_schema in field_schemas.items() if _may_change(field_schema)}


def _may_change(schema: Schema) -> bool:
    name, kind = schema.get("name"), schema.get("type")
    return (isinstance(name, str) and name in _DECODERS) or (isinstance(kind, str) and kind in _CONTAINER_TYPES)


def decode_value(value: Any, schema: Schema | None, path: str = "value") -> Any:
    """Decode one value by its schema; raise `RecordError(INVALID_VALUE)` when it does not fit."""
    if value is None or not isinstance(schema, Mapping) or is_unavailable(value):
        return value
    name = schema.get("name")
    decoder = _DECODERS.get(name) if isinstance(name, str) else None
    try:
        if decoder is not None:
            return decoder(value, schema)
        kind = schema.get("type")
        if kind == "struct" and isinstance(value, Mapping):
            return decode_struct(value, schema)
        if kind == "array" and isinstance(value, list):
            return [decode_value(item, schema.get("items"), path) for item in value]
        if kind == "map" and isinstance(value, Mapping):
            return {key: decode_value(item, schema.get("values"), path) for key, item in value.items()}
        return value
    except RecordError:
        raise
    except (ValueError, TypeError, KeyError, OverflowError, binascii.Error) as error:
        raise RecordError(
            Reason.INVALID_VALUE, f"{path}: {value!r:.80} is not a valid {name or schema.get('type')}: {error}"
        ) from None


def format_date(days: int) -> str:
    return (_EPOCH + timedelta(days=_integer(days))).isoformat()


def format_time(units: int, digits: int) -> str:
    """A time from a count of 10**-digits seconds since midnight: a time of day, or beyond one
    (MySQL's TIME spans -838:59:59 to 838:59:59, PostgreSQL's time reaches 24:00:00) the hours past
    23 and a leading minus, as the database itself prints it."""
    count = _integer(units)
    seconds, fraction = divmod(abs(count), 10**digits)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    sign = "-" if count < 0 else ""
    return f"{sign}{hours:02d}:{minutes:02d}:{secs:02d}.{fraction:0{digits}d}"


def format_timestamp(units: int, digits: int) -> str:
    """Zone-less timestamp from a count of 10**-digits seconds since the epoch."""
    scale = 10**digits
    days, rest = divmod(_integer(units), 86_400 * scale)
    return f"{format_date(days)}T{format_time(rest, digits)}"


def decode_decimal(encoded: str, scale: int) -> str:
    """Kafka Connect Decimal: base64 of a big-endian two's-complement unscaled integer."""
    unscaled = int.from_bytes(base64.b64decode(encoded, validate=True), "big", signed=True)
    return scale_integer(unscaled, scale)


def scale_integer(unscaled: int, scale: int) -> str:
    """Exact decimal text of unscaled * 10**-scale."""
    _check_scale(scale)
    if scale <= 0:
        return str(unscaled * 10**-scale)
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def number_with_scale(number: int | float | Decimal, scale: int) -> str:
    """Exact decimal text of a JSON number at a Decimal schema's scale, padded with zeros.

    JsonConverter with `decimal.format=NUMERIC` writes the decimal itself, its scale's digits
    included. `udfs.json_text` reads it as an int, a Decimal, or a float only when the double's
    shortest text is the number: that text, never the double's binary value, is the number.
    A number with more fraction digits than the scale does not fit it: a ValueError.
    """
    _check_scale(scale)
    exact = Decimal(repr(number)) if isinstance(number, float) else Decimal(number)
    try:
        scaled = exact.quantize(Decimal((0, (1,), -scale)), context=_EXACT)
    except ArithmeticError:
        raise ValueError(f"{exact} does not fit the scale {scale}") from None
    return f"{scaled if scaled else scaled.copy_abs():f}"  # no "-0.00"


def _check_scale(scale: int) -> None:
    if abs(scale) > MAX_DECIMAL_SCALE:
        raise ValueError(f"scale {scale} is beyond ±{MAX_DECIMAL_SCALE}")


def _integer(value: Any) -> int:
    # bool is an int in Python but never a valid temporal count.
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return int(value)


def _decimal(value: Any, schema: Schema) -> str:
    parameters = schema.get("parameters") or {}
    if not isinstance(parameters, Mapping):
        raise TypeError(f"expected parameters as an object, got {type(parameters).__name__}")
    scale = int(parameters.get("scale", 0))
    if isinstance(value, str):
        return decode_decimal(value, scale)
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return number_with_scale(value, scale)
    raise TypeError(f"expected base64 text or a number, got {type(value).__name__}")


def _variable_scale_decimal(value: Any, _schema: Schema) -> str:
    if not isinstance(value, Mapping):
        raise TypeError("expected a struct of scale and value")
    return decode_decimal(value["value"], _integer(value["scale"]))


def _string(value: Any, _schema: Schema) -> Any:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


_DECODERS: dict[str, Callable[[Any, Schema], Any]] = {
    "io.debezium.time.Date": lambda value, _: format_date(value),
    "org.apache.kafka.connect.data.Date": lambda value, _: format_date(value),
    "io.debezium.time.Time": lambda value, _: format_time(value, 3),
    "org.apache.kafka.connect.data.Time": lambda value, _: format_time(value, 3),
    "io.debezium.time.MicroTime": lambda value, _: format_time(value, 6),
    "io.debezium.time.NanoTime": lambda value, _: format_time(value, 9),
    "io.debezium.time.Timestamp": lambda value, _: format_timestamp(value, 3),
    "org.apache.kafka.connect.data.Timestamp": lambda value, _: format_timestamp(value, 3),
    "io.debezium.time.MicroTimestamp": lambda value, _: format_timestamp(value, 6),
    "io.debezium.time.NanoTimestamp": lambda value, _: format_timestamp(value, 9),
    "io.debezium.time.ZonedTimestamp": _string,
    "io.debezium.time.ZonedTime": _string,
    "org.apache.kafka.connect.data.Decimal": _decimal,
    "io.debezium.data.VariableScaleDecimal": _variable_scale_decimal,
    "io.debezium.data.Json": _string,
    "io.debezium.data.Uuid": _string,
}
