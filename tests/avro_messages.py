"""Debezium messages as Confluent's AvroConverter writes them, from their JsonConverter twins.

`avro_schema` turns a Connect schema, as the JsonConverter writes it in a message's `schema`, into
the Avro schema Confluent's AvroData (`fromConnectSchema`) registers for it; `avro_value` turns the
message's `payload` into the Avro value AvroData writes. Confluent's own `AvroSerializer` then
registers the schema with a real registry and frames the bytes, so the tests read what a
producer other than this project wrote. What AvroData does, as mirrored here:

- a struct is a record named by its Connect name (`io.confluent.connect.avro.ConnectDefault` when it
  has none), with `connect.name`; a record used twice (Debezium's `before` and `after`) is
  defined at its first use and named at the next;
- an optional schema is a union with `null`: `null` first, default null; the type first when its
  default is not null (Debezium's `source.snapshot`, default `"false"`);
- `int8` and `int16` are Avro ints with `connect.type`; a name, version and parameters become
  `connect.name`, `connect.version` and `connect.parameters`;
- Connect's Decimal is `bytes` with the `decimal` logical type (`precision` from the parameter
  `connect.decimal.precision`, else 64, and `scale`); Date, Time and Timestamp are `int` / `long`
  with `date`, `time-millis`, `timestamp-millis`.
"""

import base64
import math
from collections.abc import Mapping
from decimal import Context, Decimal
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

AVRO_PRIMITIVES = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "long",
    "float": "float",
    "float32": "float",
    "double": "double",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
}
LOGICAL_TYPES = {
    "org.apache.kafka.connect.data.Date": "date",
    "org.apache.kafka.connect.data.Time": "time-millis",
    "org.apache.kafka.connect.data.Timestamp": "timestamp-millis",
}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
DEFAULT_DECIMAL_PRECISION = 64


def avro_schema(connect: Mapping[str, Any], defined: set[str] | None = None) -> Any:
    """The Avro schema AvroData registers for a Connect schema (JsonConverter form)."""
    defined = set() if defined is None else defined
    schema = _required(connect, defined)
    if not connect.get("optional"):
        return schema
    default = connect.get("default")
    return ["null", schema] if default is None else [schema, "null"]


def _required(connect: Mapping[str, Any], defined: set[str]) -> Any:
    kind = connect["type"]
    name = connect.get("name")
    if kind == "struct":
        full_name = name or "io.confluent.connect.avro.ConnectDefault"
        if full_name in defined:
            return full_name
        defined.add(full_name)
        namespace, _, short = full_name.rpartition(".")
        record: dict[str, Any] = {"type": "record", "name": short}
        if namespace:
            record["namespace"] = namespace
        record["fields"] = [_field(field, defined) for field in connect["fields"]]
        schema: dict[str, Any] = record
    elif kind == "array":
        schema = {"type": "array", "items": avro_schema(connect["items"], defined)}
    elif kind == "map":
        schema = {"type": "map", "values": avro_schema(connect["values"], defined)}
    else:
        schema = {"type": AVRO_PRIMITIVES[kind]}
        if kind in ("int8", "int16"):
            schema["connect.type"] = kind
    if connect.get("version") is not None:
        schema["connect.version"] = connect["version"]
    if connect.get("parameters"):
        schema["connect.parameters"] = dict(connect["parameters"])
    if name is not None:
        schema["connect.name"] = name
    if name == DECIMAL:
        parameters = connect.get("parameters") or {}
        precision = int(parameters.get("connect.decimal.precision", DEFAULT_DECIMAL_PRECISION))
        schema.update(logicalType="decimal", precision=precision, scale=int(parameters.get("scale", 0)))
    elif name in LOGICAL_TYPES:
        schema["logicalType"] = LOGICAL_TYPES[name]
    return schema


def _field(connect: Mapping[str, Any], defined: set[str]) -> dict[str, Any]:
    field: dict[str, Any] = {"name": connect["field"], "type": avro_schema(connect, defined)}
    if connect.get("optional"):
        field["default"] = connect.get("default")
    return field


def avro_value(value: Any, connect: Mapping[str, Any] | None) -> Any:
    """The Avro value AvroData writes for a JsonConverter payload value under its Connect schema."""
    if value is None or connect is None:
        return value
    kind = connect["type"]
    if kind == "struct":
        return {field["field"]: avro_value(value.get(field["field"]), field) for field in connect["fields"]}
    if kind == "array":
        return [avro_value(item, connect["items"]) for item in value]
    if kind == "map":
        return {key: avro_value(item, connect["values"]) for key, item in value.items()}
    if kind == "bytes":
        if connect.get("name") == DECIMAL and not isinstance(value, str):
            # decimal.format=NUMERIC: the number itself; AvroData writes its unscaled bytes.
            scale = int((connect.get("parameters") or {}).get("scale", 0))
            exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)  # the digits written
            unscaled = int(exact.scaleb(scale, Context(prec=100_000)))
            return unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)
        return base64.b64decode(value)
    if kind in ("float", "float32", "double", "float64") and isinstance(value, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[value]
    return value


class AvroProducer:
    """Confluent's `AvroSerializer`, one per (topic, key or value, Avro schema), against a registry."""

    def __init__(self, registry_url: str) -> None:
        self.client = SchemaRegistryClient({"url": registry_url})
        self._serializers: dict[tuple[str, bool, str], AvroSerializer] = {}

    def serialize(self, topic: str, schema: Any, value: Any, *, is_key: bool = False) -> bytes:
        """The wire-format bytes of `value` under the Avro `schema`, registered as the topic's
        `-key` or `-value` subject."""
        import json

        text = json.dumps(schema)
        serializer = self._serializers.get((topic, is_key, text))
        if serializer is None:
            serializer = AvroSerializer(self.client, text, conf={"auto.register.schemas": True})
            self._serializers[(topic, is_key, text)] = serializer
        field = MessageField.KEY if is_key else MessageField.VALUE
        framed = serializer(value, SerializationContext(topic, field))
        assert framed is not None
        return framed

    def message(self, topic: str, json_message: Mapping[str, Any], *, is_key: bool = False) -> bytes:
        """The Avro twin of a JsonConverter message `{"schema": ..., "payload": ...}`."""
        connect = json_message["schema"]
        return self.serialize(topic, avro_schema(connect), avro_value(json_message["payload"], connect), is_key=is_key)


def conforms(value: Any, connect: Mapping[str, Any] | None) -> bool:
    """Whether a payload is one a converter could have written under its schema: every field it
    has declared, every required one present. (Hand-written examples in docs are not always.)"""
    if connect is None:
        return True
    if value is None:
        return bool(connect.get("optional")) or connect.get("default") is not None
    if connect["type"] == "struct":
        fields = {field["field"]: field for field in connect["fields"]}
        return (
            isinstance(value, Mapping)
            and value.keys() <= fields.keys()
            and all(conforms(value.get(name), field) for name, field in fields.items())
        )
    if connect["type"] in ("int8", "int16", "int32", "int64"):
        return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
    return True
