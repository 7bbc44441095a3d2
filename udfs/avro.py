"""Avro keys and values in a Schema Registry's wire format, read as the JsonConverter's messages.

Confluent's AvroConverter writes each key and value as a zero magic byte, the writer schema's
registry id in 4 bytes big-endian, then the Avro binary encoding of the record. Kafka Connect's
schema travels in the Avro schema as Confluent's AvroData writes it: each logical type as
`connect.name` (`io.debezium.time.MicroTimestamp`, `org.apache.kafka.connect.data.Decimal`, ...),
with `connect.parameters` (a Decimal's `scale`) and `connect.type` (`int8`, `int16`); Connect's
Decimal, Date, Time and Timestamp carry an Avro `logicalType` too.

A record is read with every Avro logical type left undecoded (a Decimal stays its bytes, a date
its day count) and written back as the JsonConverter writes the same Connect record:
`{"schema": <Connect schema>, "payload": <value>}`, bytes as base64 and floats as Java prints
them. The rest of the core reads that text as any JSON message, so each logical type is decoded by
the one definition (`udfs.logical_types`), exactly as from JSON.
"""

import base64
import io
import json
import math
import struct
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from fastavro import parse_schema, schemaless_reader
from fastavro.schema import SchemaParseException, UnknownType, expand_schema

from udfs import json_text
from udfs.reasons import Reason, RecordError
from udfs.schema_registry import SchemaRegistry

MAGIC_BYTE = b"\x00"
HEADER_BYTES = 5
"""The magic byte and the 4-byte schema id."""

ConnectSchema = dict[str, Any]
ToPayload = Callable[[Any], Any]
"""A decoded Avro value → the same value as the JsonConverter writes it."""

_CONNECT_TYPES = {
    "boolean": "boolean",
    "int": "int32",
    "long": "int64",
    # The JsonConverter's names: `float` and `double` for Connect's FLOAT32 and FLOAT64.
    "float": "float",
    "double": "double",
    "bytes": "bytes",
    "fixed": "bytes",
    "string": "string",
    "enum": "string",
}
_CONNECT_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_LOGICAL_TYPE_NAMES = {
    # Avro's own logical types, for a schema written without Connect's names: each read as the
    # Connect or Debezium type whose JSON encoding is the same number.
    "date": "org.apache.kafka.connect.data.Date",
    "time-millis": "org.apache.kafka.connect.data.Time",
    "timestamp-millis": "org.apache.kafka.connect.data.Timestamp",
    "local-timestamp-millis": "org.apache.kafka.connect.data.Timestamp",
    "time-micros": "io.debezium.time.MicroTime",
    "timestamp-micros": "io.debezium.time.MicroTimestamp",
    "local-timestamp-micros": "io.debezium.time.MicroTimestamp",
    "timestamp-nanos": "io.debezium.time.NanoTimestamp",
    "local-timestamp-nanos": "io.debezium.time.NanoTimestamp",
    "uuid": "io.debezium.data.Uuid",
    "decimal": _CONNECT_DECIMAL,
}
_LOGICAL_TYPE = "cdc.logicalType"
"""Where a schema's `logicalType` is kept while fastavro reads the schema (it keeps other names)."""
_MAP_ENTRY = "io.confluent.connect.avro.MapEntry"
"""AvroData's record for a map entry whose key is not a string: such a map is an Avro array."""
_CONNECT_DEFAULT = "io.confluent.connect.avro.ConnectDefault"
"""AvroData's record name for a Connect struct that had none."""
_JAVA_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


class WriterSchema(NamedTuple):
    """A registered Avro schema made ready to read: how to decode, and how to write back."""

    reading: Any
    """fastavro's parsed schema, without logical types: values come back as they were encoded."""
    connect: ConnectSchema
    """The Connect schema, as the JsonConverter writes it in a message's `schema`."""
    to_payload: ToPayload


def is_wire_format(data: bytes) -> bool:
    """Whether bytes start with the wire format's magic byte: JSON text never starts with NUL."""
    return data[:1] == MAGIC_BYTE


def schema_id_of(data: bytes) -> int:
    """The registry id of the schema the bytes were written with."""
    if not is_wire_format(data):
        raise RecordError(Reason.INVALID_WIRE_FORMAT, f"the first byte is 0x{data[:1].hex()}, not the magic byte 0x00")
    if len(data) < HEADER_BYTES:
        detail = f"{len(data)} bytes: too short for the magic byte and a 4-byte schema id"
        raise RecordError(Reason.INVALID_WIRE_FORMAT, detail)
    return int.from_bytes(data[1:HEADER_BYTES], "big")


def converter_text(data: bytes, registry: SchemaRegistry | None) -> str:
    """The JsonConverter text `{"schema": ..., "payload": ...}` of a key or value in the wire format."""
    schema_id = schema_id_of(data)
    if registry is None:
        detail = f"schema id {schema_id}: no Schema Registry is configured (CDC_SCHEMA_REGISTRY_URL)"
        raise RecordError(Reason.NO_SCHEMA_REGISTRY, detail)
    registered = registry.schema(schema_id)
    if registered.schema_type != "AVRO":
        raise RecordError(Reason.UNSUPPORTED_SCHEMA, f"schema id {schema_id} is {registered.schema_type}, not Avro")
    if registered.has_references:
        detail = f"schema id {schema_id} refers to schemas of other subjects, which are not read"
        raise RecordError(Reason.UNSUPPORTED_SCHEMA, detail)
    try:
        writer = writer_schema(registered.text)
    except RecordError as error:
        raise RecordError(error.reason, f"schema id {schema_id}: {error.detail}") from None
    value = read_datum(data, writer.reading, schema_id)
    return json_text.dumps({"schema": writer.connect, "payload": writer.to_payload(value)})


def read_datum(data: bytes, reading: Any, schema_id: int) -> Any:
    """The Avro value after the header; every byte must be read (Avro has no end mark to check)."""
    stream = io.BytesIO(data)
    stream.seek(HEADER_BYTES)
    try:
        value = schemaless_reader(stream, reading, None)
    except (EOFError, ValueError, IndexError, KeyError, TypeError, OverflowError, MemoryError, struct.error) as error:
        detail = f"schema id {schema_id}: the bytes do not decode: {type(error).__name__}: {error}"
        raise RecordError(Reason.INVALID_AVRO, json_text.shorten(detail)) from None
    left = len(data) - stream.tell()
    if left:
        raise RecordError(Reason.INVALID_AVRO, f"schema id {schema_id}: {left} bytes left after the record")
    return value


@lru_cache(maxsize=1024)
def writer_schema(text: str) -> WriterSchema:
    """An Avro schema's text made ready to read (once per distinct text: every record of a table
    version names the same schema)."""
    try:
        declared = _logical_types_set_aside(json.loads(text))
        reading = parse_schema(declared)
        connect, to_payload = _connect(expand_schema(declared))  # named types written out where used
    except RecursionError:
        raise RecordError(Reason.UNSUPPORTED_SCHEMA, "a recursive Avro schema (Kafka Connect has none)") from None
    except (SchemaParseException, UnknownType, ValueError, TypeError, KeyError, AttributeError) as error:
        detail = json_text.shorten(f"not an Avro schema read here: {type(error).__name__}: {error}")
        raise RecordError(Reason.UNSUPPORTED_SCHEMA, detail) from None
    return WriterSchema(reading, connect or {}, to_payload)


def _logical_types_set_aside(schema: Any) -> Any:
    """The schema with each `logicalType` under another name: fastavro then reads its values as
    their encoding (an int, a long, bytes), which is what the JsonConverter writes too, and does
    not round a decimal to its declared precision."""
    if isinstance(schema, list):
        return [_logical_types_set_aside(branch) for branch in schema]
    if not isinstance(schema, Mapping):
        return schema
    return {
        _LOGICAL_TYPE if name == "logicalType" else name: _logical_types_set_aside(value)
        for name, value in schema.items()
    }


def _connect(schema: Any) -> tuple[ConnectSchema | None, ToPayload]:
    """The Connect schema of an (expanded) Avro schema, as Confluent's AvroData reads it back, and
    how its values are written as the JsonConverter writes them. None for `null` alone."""
    if isinstance(schema, list):
        return _union(schema)
    if isinstance(schema, str):
        schema = {"type": schema}
    kind = schema["type"]
    if not isinstance(kind, str):  # {"type": {"type": "long", ...}}: the inner one counts
        return _connect(kind)
    if kind == "null":
        return None, _same
    if kind == "record":
        return _record(schema)
    if kind == "array":
        return _array(schema)
    if kind == "map":
        values, values_payload = _connect(schema["values"])
        connect = _named({"type": "map", "optional": False}, schema)
        connect.update(keys={"type": "string", "optional": False}, values=values)
        return connect, lambda value: {key: values_payload(item) for key, item in value.items()}
    connect_type = _CONNECT_TYPES.get(kind)
    if connect_type is None:
        raise ValueError(f"unknown Avro type {kind!r}")
    if kind == "int" and schema.get("connect.type") in ("int8", "int16"):
        connect_type = schema["connect.type"]
    connect = _named({"type": connect_type, "optional": False}, schema)
    return connect, _PRIMITIVE_PAYLOADS.get(kind, _same)


def _named(connect: ConnectSchema, schema: Mapping[str, Any]) -> ConnectSchema:
    """The Connect name, version and parameters AvroData keeps in `connect.*` properties; else the
    Connect type an Avro logical type stands for."""
    name = schema.get("connect.name")
    parameters = schema.get("connect.parameters")
    logical = schema.get(_LOGICAL_TYPE)
    if name is None and isinstance(logical, str):
        name = _LOGICAL_TYPE_NAMES.get(logical)
    if name is None and schema.get("type") == "record" and schema.get("name") != _CONNECT_DEFAULT:
        name = schema.get("name")
    if name == _CONNECT_DECIMAL and not isinstance(parameters, Mapping):
        parameters = {"scale": str(schema.get("scale", 0))}
    if isinstance(name, str):
        connect["name"] = name
    if isinstance(schema.get("connect.version"), int):
        connect["version"] = schema["connect.version"]
    if isinstance(parameters, Mapping):
        connect["parameters"] = dict(parameters)
    return connect


def _record(schema: Mapping[str, Any]) -> tuple[ConnectSchema, ToPayload]:
    fields: list[ConnectSchema] = []
    payloads: list[tuple[str, ToPayload]] = []
    for avro_field in schema["fields"]:
        name = avro_field["name"]
        field_connect, field_payload = _connect(avro_field["type"])
        fields.append({**(field_connect or {"type": "struct", "optional": True}), "field": name})
        payloads.append((name, field_payload))

    def to_payload(value: Mapping[str, Any]) -> dict[str, Any]:
        return {name: payload_of(value[name]) for name, payload_of in payloads}

    connect = _named({"type": "struct", "optional": False}, schema)
    connect["fields"] = fields
    return connect, to_payload


def _array(schema: Mapping[str, Any]) -> tuple[ConnectSchema, ToPayload]:
    items = schema["items"]
    if isinstance(items, Mapping) and items.get("type") == "record" and items.get("name") == _MAP_ENTRY:
        # A Connect map whose keys are not strings: the JsonConverter writes [[key, value], ...].
        fields = {avro_field["name"]: _connect(avro_field["type"]) for avro_field in items["fields"]}
        (keys, key_payload), (values, value_payload) = fields["key"], fields["value"]
        connect = _named({"type": "map", "optional": False}, schema)
        connect.update(keys=keys, values=values)
        return connect, lambda value: [[key_payload(entry["key"]), value_payload(entry["value"])] for entry in value]
    item_schema, item_payload = _connect(items)
    connect = _named({"type": "array", "optional": False}, schema)
    connect["items"] = item_schema
    return connect, lambda value: [item_payload(item) for item in value]


def _union(branches: list[Any]) -> tuple[ConnectSchema | None, ToPayload]:
    """AvroData writes an optional Connect field as a union of `null` and its type (in either order,
    `null` second when the default is not null); a wider union has no Connect schema here, and
    its values are written by their Python type."""
    present = [branch for branch in branches if branch != "null" and branch != {"type": "null"}]
    if len(present) == 1:
        connect, to_payload = _connect(present[0])
        if connect is not None and len(present) < len(branches):
            connect = {**connect, "optional": True}
        return connect, lambda value: None if value is None else to_payload(value)
    return None, _by_python_type


def _same(value: Any) -> Any:
    return value


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _double(value: float) -> float | str:
    """A double as the JsonConverter writes it: Jackson quotes NaN and the infinities."""
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else _JAVA_NON_FINITE[value]


def _float(value: float) -> float | str:
    """A 32-bit float as the JsonConverter writes it, by Java's `Float.toString` (JDK 19 and later):
    the shortest decimal that reads back as the same float, two digits when one would do (of
    those, the nearest): 3.14 for what a double holds as 3.140000104904175, 1.4E-45 for the
    smallest float, not 1E-45. A reader of the JSON takes that decimal as a double."""
    if not math.isfinite(value):
        return _double(value)
    for digits in range(1, 10):
        shortest = float(f"{value:.{digits}g}")
        if _as_float32(shortest) == value:
            if digits == 1 and _as_float32(two := float(f"{value:.2g}")) == value:
                return two
            return shortest
    return value


def _as_float32(value: float) -> float:
    result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return result


def _by_python_type(value: Any) -> Any:
    """A value of a union with no Connect schema: bytes as base64, floats as doubles, the rest as it is."""
    if isinstance(value, bytes):
        return _base64(value)
    if isinstance(value, float):
        return _double(value)
    if isinstance(value, Mapping):
        return {key: _by_python_type(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_by_python_type(item) for item in value]
    return value


_PRIMITIVE_PAYLOADS: dict[str, ToPayload] = {
    "bytes": _base64,
    "fixed": _base64,
    "float": _float,
    "double": _double,
}


def message_texts(
    key: bytes | None, value: bytes | None, registry: SchemaRegistry | None
) -> tuple[str | None, str | None]:
    """The key and payload texts the parsing core reads, from a Kafka record's bytes: UTF-8 text as
    it is, the wire format as its JsonConverter text (`converter_text`). A null stays null (a
    tombstone stays one)."""
    payload_text = _message_text(value, "value", key, registry)
    key_text = _message_text(key, "key", value, registry)
    return key_text, payload_text


def _message_text(data: bytes | None, what: str, other: bytes | None, registry: SchemaRegistry | None) -> str | None:
    if data is None:
        return None
    if is_wire_format(data):
        try:
            return converter_text(data, registry)
        except RecordError as error:
            raise RecordError(error.reason, f"{what}: {error.detail}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if other is not None and is_wire_format(other):
            # Its twin is Avro: these bytes were meant to be too, and lost or never had the header.
            detail = f"the {what} is not UTF-8 text and its first byte is 0x{data[:1].hex()}, not the magic byte 0x00"
            raise RecordError(Reason.INVALID_WIRE_FORMAT, detail) from None
        raise RecordError(Reason.INVALID_ENCODING, f"{what} is not UTF-8: {error}") from None
