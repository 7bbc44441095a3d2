"""A Debezium PostgreSQL change event with a column of every type and logical type the JSON tests
decode, in the JsonConverter's form (`{"schema": ..., "payload": ...}`): the JSON twins whose Avro
forms (tests/avro_messages.py) must read the same, in the parsing core (tests/unit/test_avro.py)
and in a build (tests/integration/test_avro_landing.py).
"""

import base64
from collections.abc import Iterator
from typing import Any

from udfs.logical_types import UNAVAILABLE_BYTES, UNAVAILABLE_VALUE

TOPIC = "pg.public.items"


def connect_decimal(unscaled: int) -> str:
    return base64.b64encode(unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)).decode()


def column(name: str, kind: str, logical: str | None = None, optional: bool = True, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind, "optional": optional}
    if logical is not None:
        schema.update(name=logical, version=1)
    schema.update(extra)
    schema["field"] = name
    return schema


def decimal_column(name: str, scale: int, precision: int | None) -> dict[str, Any]:
    parameters = {"scale": str(scale)}
    if precision is not None:
        parameters["connect.decimal.precision"] = str(precision)
    return column(name, "bytes", "org.apache.kafka.connect.data.Decimal", parameters=parameters)


ROW_COLUMNS = [
    column("id", "int32", optional=False),
    column("tiny", "int8"),
    column("small", "int16"),
    column("big", "int64"),
    column("ratio", "float"),
    column("share", "double"),
    column("odd_float", "float"),
    column("flag", "boolean"),
    column("name", "string"),
    column("blob", "bytes"),
    column("born", "int32", "io.debezium.time.Date"),
    column("connect_date", "int32", "org.apache.kafka.connect.data.Date"),
    column("alarm", "int32", "io.debezium.time.Time"),
    column("micro_time", "int64", "io.debezium.time.MicroTime"),
    column("nano_time", "int64", "io.debezium.time.NanoTime"),
    column("connect_time", "int32", "org.apache.kafka.connect.data.Time"),
    column("seen", "int64", "io.debezium.time.Timestamp"),
    column("micro_seen", "int64", "io.debezium.time.MicroTimestamp"),
    column("nano_seen", "int64", "io.debezium.time.NanoTimestamp"),
    column("connect_seen", "int64", "org.apache.kafka.connect.data.Timestamp"),
    column("zoned_seen", "string", "io.debezium.time.ZonedTimestamp"),
    column("zoned_time", "string", "io.debezium.time.ZonedTime"),
    decimal_column("price", 2, 10),
    decimal_column("wide", 10, 40),
    # No precision parameter: AvroData declares 64 digits, and this value has more.
    decimal_column("huge", 5, None),
    column(
        "variable",
        "struct",
        "io.debezium.data.VariableScaleDecimal",
        fields=[column("scale", "int32", optional=False), column("value", "bytes", optional=False)],
        doc="Variable scaled decimal",
    ),
    column("doc", "string", "io.debezium.data.Json"),
    column("uid", "string", "io.debezium.data.Uuid"),
    column("mood", "string", "io.debezium.data.Enum", parameters={"allowed": "sad,ok,happy"}),
    column("tags", "array", items={"type": "string", "optional": True}),
    column(
        "amounts",
        "array",
        items={
            "type": "bytes",
            "optional": False,
            "name": "org.apache.kafka.connect.data.Decimal",
            "version": 1,
            "parameters": {"scale": "2"},
        },
    ),
    column(
        "attributes", "map", keys={"type": "string", "optional": False}, values={"type": "string", "optional": True}
    ),
    column(
        "location",
        "struct",
        "io.debezium.data.geometry.Point",
        fields=[
            column("x", "double", optional=False),
            column("y", "double", optional=False),
            column("wkb", "bytes"),
            column("srid", "int32"),
        ],
    ),
    column("missing", "int64"),
    column("toasted", "string"),
    column("toasted_bytes", "bytes"),
]

ROW_SCHEMA = {"type": "struct", "optional": True, "name": f"{TOPIC}.Value", "fields": ROW_COLUMNS}
SOURCE_SCHEMA = {
    "type": "struct",
    "optional": False,
    "name": "io.debezium.connector.postgresql.Source",
    "fields": [
        column("version", "string", optional=False),
        column("connector", "string", optional=False),
        column("name", "string", optional=False),
        column("ts_ms", "int64", optional=False),
        column(
            "snapshot",
            "string",
            "io.debezium.data.Enum",
            default="false",
            parameters={
                "allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
            },
        ),
        column("db", "string", optional=False),
        column("sequence", "string"),
        column("schema", "string", optional=False),
        column("table", "string", optional=False),
        column("txId", "int64"),
        column("lsn", "int64"),
        column("xmin", "int64"),
    ],
    "field": "source",
}
TRANSACTION_SCHEMA = {
    "type": "struct",
    "optional": True,
    "name": "event.block",
    "version": 1,
    "fields": [
        column("id", "string", optional=False),
        column("total_order", "int64", optional=False),
        column("data_collection_order", "int64", optional=False),
    ],
    "field": "transaction",
}
VALUE_SCHEMA = {
    "type": "struct",
    "optional": False,
    "name": f"{TOPIC}.Envelope",
    "version": 2,
    "fields": [
        {**ROW_SCHEMA, "field": "before"},
        {**ROW_SCHEMA, "field": "after"},
        SOURCE_SCHEMA,
        column("op", "string", optional=False),
        column("ts_ms", "int64"),
        TRANSACTION_SCHEMA,
    ],
}
KEY_SCHEMA = {
    "type": "struct",
    "optional": False,
    "name": f"{TOPIC}.Key",
    "fields": [
        column("id", "int32", optional=False),
        column("region_day", "int32", "io.debezium.time.Date", optional=False),
    ],
}


def row(row_id: int, **changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "id": row_id,
        "tiny": -128,
        "small": 32767,
        "big": -(2**63),
        "ratio": 3.14,
        "share": 0.30000000000000004,
        "odd_float": 1.4e-45,  # the smallest float, printed by Java with two digits
        "flag": True,
        "name": "Åsa 'quoted' \"name\" \u00e9\U0001f600",
        "blob": base64.b64encode(bytes(range(256))).decode(),
        "born": -719162,  # 0001-01-01
        "connect_date": 2932896,  # 9999-12-31
        "alarm": 86_399_999,
        "micro_time": 3_020_399_000_000,  # MySQL's largest TIME, 838:59:59
        "nano_time": 45_296_123_456_789,
        "connect_time": 45_296_123,
        "seen": 1_596_001_099_434,
        "micro_seen": -1,  # a microsecond before the epoch
        "nano_seen": 1_596_001_099_434_123_456,
        "connect_seen": 253_402_300_799_999,  # 9999-12-31T23:59:59.999
        "zoned_seen": "2024-01-31T12:34:56.123456+05:30",
        "zoned_time": "12:34:56.789Z",
        "price": connect_decimal(-5),  # -0.05
        "wide": connect_decimal(12_345_678_901_234_567_890_123_456_789_012_345_678),
        "huge": connect_decimal(-(10**70) + 7),
        "variable": {"scale": 3, "value": connect_decimal(-123_456_789)},
        "doc": '{"a": [1, 2.5, null]}',
        "uid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "mood": "happy",
        "tags": ["x", None, ""],
        "amounts": [connect_decimal(1), connect_decimal(-250)],
        "attributes": {"colour": "red", "size": None},
        "location": {"x": 1.5, "y": -2.25, "wkb": base64.b64encode(b"\x01\x01\x00").decode(), "srid": None},
        "missing": None,
        "toasted": "a long text",
        "toasted_bytes": base64.b64encode(b"long bytes").decode(),
    }
    values.update(changes)
    return values


SOURCE = {"version": "3.6.3.Final", "connector": "postgresql", "name": "pg", "ts_ms": 1_700_000_000_123,
          "snapshot": "false", "db": "shop", "sequence": '["24023119","24023128"]', "schema": "public",
          "table": "items", "txId": 555, "lsn": 24_023_128, "xmin": None}  # fmt: skip


def change_event(op: str, before: dict[str, Any] | None, after: dict[str, Any] | None, **source: Any) -> dict[str, Any]:
    transaction = {"id": "555:24023128", "total_order": 2, "data_collection_order": 1}
    payload = {"before": before, "after": after, "source": {**SOURCE, **source}, "op": op, "ts_ms": 1_700_000_000_456,
               "transaction": transaction if op != "r" else None}  # fmt: skip
    return {"schema": VALUE_SCHEMA, "payload": payload}


def key_of(row_id: int) -> dict[str, Any]:
    return {"schema": KEY_SCHEMA, "payload": {"id": row_id, "region_day": 19_723}}


def stream() -> Iterator[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    """(what, key, value) of every kind of row change, in both images."""
    yield "snapshot read", key_of(1), change_event("r", None, row(1), snapshot="first", sequence=None)
    yield "create", key_of(2), change_event("c", None, row(2))
    yield "update, full before", key_of(2), change_event("u", row(2), row(2, price=connect_decimal(1250), tags=[]))
    toasted = row(2, toasted=UNAVAILABLE_VALUE, toasted_bytes=UNAVAILABLE_BYTES)
    yield "update, TOAST placeholders", key_of(2), change_event("u", None, toasted)
    non_finite = row(3, ratio="NaN", share="-Infinity", odd_float="Infinity")
    yield "NaN and infinities", key_of(3), change_event("c", None, non_finite)
    yield "delete", key_of(2), change_event("d", row(2), None)
    yield "truncate", None, change_event("t", None, None)
