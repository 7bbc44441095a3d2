"""Avro keys and values in a Schema Registry's wire format (udfs/avro.py), against a real registry.

Each message is written twice: as the JsonConverter writes it, and as Confluent's AvroConverter
would (tests/avro_messages.py: the Avro schema AvroData registers, serialised by Confluent's own
`AvroSerializer` into Apicurio Registry). Every Avro record must parse exactly as its JSON twin
does, field for field; each way an Avro record can fail has its own quarantine reason.
"""

import base64
import io
import json
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema
from fastavro import parse_schema, schemaless_writer
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.avro_messages import AvroProducer, avro_schema, avro_value, conforms
from tests.corpus import corpus_dir
from tests.real_parts.schema_registry import SchemaRegistryServer, start_schema_registry
from udfs import json_text
from udfs.avro import HEADER_BYTES, converter_text, writer_schema
from udfs.events import ParsedRecord
from udfs.logical_types import UNAVAILABLE_BYTES, UNAVAILABLE_VALUE
from udfs.records import parse_record, parse_record_bytes
from udfs.schema_registry import RETRYABLE_REASONS, URL_VARIABLE, Response, SchemaRegistry, registry_from_settings

TOPIC = "pg.public.items"
JSON_KEY = b'{"id":1}'
"""A key as text beside an Avro value (Connect's StringConverter or JsonConverter for keys)."""


@pytest.fixture(scope="module")
def producer(schema_registry_server: SchemaRegistryServer) -> AvroProducer:
    return AvroProducer(schema_registry_server.url)


@pytest.fixture
def registry(schema_registry_server: SchemaRegistryServer) -> SchemaRegistry:
    """A client of its own per test: nothing a test fetched is in another's cache."""
    client = registry_from_settings(schema_registry_server.url)
    assert client is not None
    return client


def twins(
    producer: AvroProducer, registry: SchemaRegistry, key: dict[str, Any] | None, value: dict[str, Any] | None
) -> tuple[ParsedRecord, ParsedRecord]:
    """The record parsed from its JSON form and from its Avro form."""
    key_text = None if key is None else json_text.dumps(key)
    value_text = None if value is None else json_text.dumps(value)
    avro_key = None if key is None else producer.message(TOPIC, key, is_key=True)
    avro_payload = None if value is None else producer.message(TOPIC, value)
    from_json = parse_record(key_text, value_text, 3, 17, TOPIC)
    from_avro = parse_record_bytes(avro_key, avro_payload, 3, 17, TOPIC, registry)
    return from_json, from_avro


# A PostgreSQL change event with a column of every type and logical type the JSON tests decode,
# in the JsonConverter's form.


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


@pytest.mark.parametrize(("what", "key", "value"), list(stream()), ids=[what for what, _, _ in stream()])
def test_every_logical_type_reads_as_from_json(
    producer: AvroProducer, registry: SchemaRegistry, what: str, key: Any, value: Any
) -> None:
    from_json, from_avro = twins(producer, registry, key, value)
    assert from_json.outcome == "change", from_json
    assert from_avro == from_json


def test_the_decoded_values_are_the_json_paths() -> None:
    """What the twins agree on is the documented row JSON (a check that the comparison is not
    between two equally wrong readings)."""
    after = json.loads(
        parse_record(json_text.dumps(key_of(1)), json_text.dumps(change_event("c", None, row(1))), 0, 0).after or ""
    )
    assert (after["ratio"], after["odd_float"], after["born"], after["connect_date"]) == (
        3.14,
        1.4e-45,
        "0001-01-01",
        "9999-12-31",
    )
    assert (after["micro_time"], after["micro_seen"]) == ("838:59:59.000000", "1969-12-31T23:59:59.999999")
    assert (after["price"], after["variable"], after["huge"]) == ("-0.05", "-123456.789", "-" + "9" * 64 + "9.99993")


def test_a_float_reads_as_java_prints_it(producer: AvroProducer, registry: SchemaRegistry) -> None:
    """The JsonConverter writes a 32-bit float by Java's `Float.toString`: the shortest text that
    reads back as the same float (3.14, not 3.140000104904175), two digits when one would do
    (1.4E-45, not 1E-45); 16777217 is no float, and prints as 1.6777216E7."""
    _, from_avro = twins(
        producer, registry, key_of(1), change_event("c", None, row(1, tiny=None, odd_float=16777217.0))
    )
    after = json.loads(from_avro.after or "")
    assert (after["ratio"], after["odd_float"]) == (3.14, 16777216.0)
    _, from_avro = twins(producer, registry, key_of(1), change_event("c", None, row(1)))
    assert json.loads(from_avro.after or "")["odd_float"] == 1.4e-45


def test_a_tombstone_stays_a_tombstone_with_its_key(producer: AvroProducer, registry: SchemaRegistry) -> None:
    from_json, from_avro = twins(producer, registry, key_of(4), None)
    assert (from_avro.outcome, from_avro.ignore_class, from_avro.row_key) == (
        "ignored",
        "tombstone",
        '{"id":4,"region_day":"2024-01-01"}',
    )
    assert from_avro == from_json


def test_a_flattened_record_reads_as_from_json(producer: AvroProducer, registry: SchemaRegistry) -> None:
    """ExtractNewRecordState's rows, told by their schema's name `<topic>.Value` alone."""
    fields = [
        column("id", "int32", optional=False),
        column("seen", "int64", "io.debezium.time.MicroTimestamp"),
        decimal_column("price", 2, 10),
    ]
    schema = {"type": "struct", "optional": False, "name": f"{TOPIC}.Value", "fields": fields}
    value = {"schema": schema, "payload": {"id": 9, "seen": 1_596_001_099_434_123, "price": connect_decimal(995)}}
    from_json, from_avro = twins(producer, registry, key_of(9), value)
    assert (from_json.outcome, from_json.source_table) == ("change", "public.items")
    assert from_avro == from_json


def test_several_schema_ids_in_one_topic(producer: AvroProducer, registry: SchemaRegistry) -> None:
    """A column added: the topic's records name two schema ids, and each reads with its own."""
    added = {**VALUE_SCHEMA, "fields": [
        {**ROW_SCHEMA, "field": field, "fields": [*ROW_COLUMNS, decimal_column("discount", 3, 5)]}
        for field in ("before", "after")
    ] + VALUE_SCHEMA["fields"][2:]}  # fmt: skip
    old = change_event("c", None, row(5))
    new = {"schema": added, "payload": {**old["payload"], "after": row(5, discount=connect_decimal(125))}}
    old_bytes, new_bytes = producer.message(TOPIC, old), producer.message(TOPIC, new)
    assert old_bytes[1:HEADER_BYTES] != new_bytes[1:HEADER_BYTES]
    for message in (old, new):
        from_json, from_avro = twins(producer, registry, key_of(5), message)
        assert from_avro == from_json
    assert json.loads(parse_record_bytes(JSON_KEY, new_bytes, 0, 0, TOPIC, registry).after or "")["discount"] == "0.125"


def corpus_messages() -> list[tuple[str, str, Any]]:
    """Every JsonConverter message (schema and payload) of the shared corpus a converter could
    have written: (file and line, text, message read exactly)."""
    found = []
    root = corpus_dir()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".jsonl", ".txt", ".1"):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if not line.lstrip().startswith('{"schema"'):
                continue
            try:
                message = json_text.loads(line.strip())
            except ValueError:
                continue
            if isinstance(message.get("schema"), dict) and conforms(message.get("payload"), message["schema"]):
                found.append((f"{path.relative_to(root)}:{number}", line.strip(), message))
    return found


def test_the_corpus_messages_read_as_from_json(producer: AvroProducer, registry: SchemaRegistry) -> None:
    """Real connectors' JsonConverter messages (PostgreSQL, MySQL, Db2, MongoDB, from Debezium's docs,
    Flink, Paimon, Doris): each one's Avro twin parses to the same record."""
    messages = corpus_messages()
    assert len(messages) >= 50
    key = json_text.dumps(
        {"schema": {"type": "struct", "fields": [column("id", "int32", optional=False)]}, "payload": {"id": 7}}
    )
    avro_key = producer.message("corpus", json_text.loads(key), is_key=True)
    differences = []
    for offset, (where, text, message) in enumerate(messages):
        avro = producer.message("corpus." + where.split(":")[0].replace("/", "."), message)
        from_json = parse_record(key, text, 0, offset, "corpus")
        from_avro = parse_record_bytes(avro_key, avro, 0, offset, "corpus", registry)
        if from_avro != from_json:
            fields = [name for name in ParsedRecord._fields if getattr(from_avro, name) != getattr(from_json, name)]
            differences.append(f"{where}: {fields}")
    assert differences == []


def test_json_bytes_read_as_json_text(producer: AvroProducer, registry: SchemaRegistry) -> None:
    """Bytes that do not start with the magic byte are the text they always were."""
    for offset, (_, text, _) in enumerate(corpus_messages()):
        assert parse_record_bytes(b'{"id":1}', text.encode(), 0, offset, "t", registry) == parse_record(
            '{"id":1}', text, 0, offset, "t"
        )
    not_text = parse_record_bytes(None, b"\xff\xfe{}", 0, 0, "t", registry)
    assert (not_text.outcome, not_text.reason) == ("quarantine", "invalid_encoding")


# Each way an Avro record can fail.


def reason_of(key: bytes | None, value: bytes | None, registry: SchemaRegistry | None) -> tuple[str | None, str | None]:
    parsed = parse_record_bytes(key, value, 0, 0, TOPIC, registry)
    assert parsed.outcome == "quarantine", parsed
    return parsed.reason, parsed.detail


def test_too_short_for_a_schema_id(registry: SchemaRegistry) -> None:
    reason, detail = reason_of(None, b"\x00\x00\x01", registry)
    assert reason == "invalid_wire_format"
    assert detail == "value: 3 bytes: too short for the magic byte and a 4-byte schema id"


def test_bytes_beside_an_avro_key_without_the_magic_byte(producer: AvroProducer, registry: SchemaRegistry) -> None:
    avro_key = producer.message(TOPIC, key_of(1), is_key=True)
    reason, detail = reason_of(avro_key, b"\x01\x00\x00\x00\x07\xff\x02", registry)
    assert reason == "invalid_wire_format"
    assert "first byte is 0x01, not the magic byte 0x00" in (detail or "")


def test_an_unknown_schema_id(registry: SchemaRegistry) -> None:
    reason, detail = reason_of(None, b"\x00" + (2**31 - 1).to_bytes(4, "big") + b"\x02", registry)
    assert reason == "unknown_schema_id"
    assert "schema id 2147483647 is not in the registry" in (detail or "")


def test_no_registry_configured(producer: AvroProducer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    value = producer.message(TOPIC, change_event("c", None, row(1)))
    reason, _ = reason_of(None, value, None)
    assert reason == "no_schema_registry"


def test_the_registry_from_the_environment(producer: AvroProducer, schema_registry_server: SchemaRegistryServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv(URL_VARIABLE, schema_registry_server.url)
    key, value = (
        producer.message(TOPIC, key_of(1), is_key=True),
        producer.message(TOPIC, change_event("c", None, row(1))),
    )
    assert parse_record_bytes(key, value, 0, 0, TOPIC).outcome == "change"


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda data: data[:-3], "the bytes do not decode"),
        (lambda data: data + b"\x00", "1 bytes left after the record"),
        (
            lambda data: data[:HEADER_BYTES] + b"\x07" + data[HEADER_BYTES + 1 :],
            "the bytes do not decode",
        ),  # no union branch 3
    ],
    ids=["cut short", "a byte too many", "a union branch out of range"],
)
def test_avro_that_does_not_decode(
    producer: AvroProducer, registry: SchemaRegistry, damage: Any, expected: str
) -> None:
    value = producer.message(TOPIC, change_event("c", None, row(1)))
    reason, detail = reason_of(None, damage(value), registry)
    assert reason == "invalid_avro"
    assert expected in (detail or "")


def test_a_string_that_is_not_utf8(producer: AvroProducer, registry: SchemaRegistry) -> None:
    schema = {"type": "record", "name": "Text", "fields": [{"name": "s", "type": "string"}]}
    framed = producer.serialize("texts", schema, {"s": "ab"})
    reason, _ = reason_of(None, framed[:-2] + b"\xff\xfe", registry)
    assert reason == "invalid_avro"


JSON_SCHEMA = '{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}'


def test_a_schema_that_is_not_avro(producer: AvroProducer, registry: SchemaRegistry) -> None:
    registered = producer.client.register_schema("json-value", Schema(JSON_SCHEMA, "JSON"))
    schema_id = registered if isinstance(registered, int) else registered.schema_id
    reason, detail = reason_of(None, b"\x00" + schema_id.to_bytes(4, "big") + b'{"a": 1}', registry)
    assert (reason, detail) == ("unsupported_schema", f"value: schema id {schema_id} is JSON, not Avro")


def test_an_avro_schema_is_read_once_per_text() -> None:
    text = json.dumps(avro_schema(VALUE_SCHEMA))
    assert writer_schema(text) is writer_schema(text)
    assert writer_schema(text).connect["name"] == f"{TOPIC}.Envelope"


def test_a_decimal_is_written_back_as_the_json_converter_writes_it(
    producer: AvroProducer, registry: SchemaRegistry
) -> None:
    """Base64 of its unscaled two's-complement bytes, whatever precision the Avro schema declares."""
    text = converter_text(producer.message(TOPIC, change_event("c", None, row(1))), registry)
    after = json_text.loads(text)["payload"]["after"]
    assert (after["price"], after["huge"]) == (connect_decimal(-5), connect_decimal(-(10**70) + 7))


# A registry that stops answering.


def test_a_registry_stopped_mid_way(producer: AvroProducer, tmp_path: Path) -> None:
    """Schemas already fetched keep being read from memory; a new id is `schema_registry_unavailable`
    (a reason a later build can retry), answered at once, not after a timeout per record."""
    with start_schema_registry(tmp_path / "registry") as server:
        own = AvroProducer(server.url)
        registry = registry_from_settings(server.url)
        first = own.message(TOPIC, change_event("c", None, row(1)))
        assert parse_record_bytes(JSON_KEY, first, 0, 0, TOPIC, registry).outcome == "change"
        added = {**VALUE_SCHEMA, "name": f"{TOPIC}.Envelope2"}
        second = own.message(TOPIC, {"schema": added, "payload": change_event("c", None, row(1))["payload"]})
        server.stop()
        assert parse_record_bytes(JSON_KEY, first, 0, 1, TOPIC, registry).outcome == "change"
        started = time.monotonic()
        parsed = [parse_record_bytes(None, second, 0, offset, TOPIC, registry) for offset in range(100)]
        assert time.monotonic() - started < 5
        assert {(record.outcome, record.reason) for record in parsed} == {("quarantine", "schema_registry_unavailable")}
        assert "Connection refused" in (parsed[0].detail or "")
        assert parsed[0].reason in RETRYABLE_REASONS


def test_a_registry_that_does_not_answer_in_time(producer: AvroProducer) -> None:
    """A registry that accepts the connection and says nothing: a timeout, then unavailable."""
    value = producer.message(TOPIC, change_event("c", None, row(1)))
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        registry = registry_from_settings(f"http://127.0.0.1:{silent.getsockname()[1]}/apis/ccompat/v7")
        assert registry is not None
        registry.timeout = 0.5
        started = time.monotonic()
        reason, detail = reason_of(None, value, registry)
        assert time.monotonic() - started < 3
    assert reason == "schema_registry_unavailable"
    assert "timed out" in (detail or "")


def registry_answering(schema: Any) -> SchemaRegistry:
    """A registry stand-in that answers every id with `schema` (no HTTP)."""
    body = json.dumps({"schema": json.dumps(schema)}).encode()
    return SchemaRegistry(("http://stand-in",), fetch=lambda url, headers, timeout: Response(200, body))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.none(), st.binary(max_size=40).map(lambda tail: b"\x00\x00\x00\x00\x01" + tail), st.binary(max_size=40)
    ),
    st.one_of(
        st.none(), st.binary(max_size=200).map(lambda tail: b"\x00\x00\x00\x00\x02" + tail), st.binary(max_size=60)
    ),
)
def test_no_bytes_make_the_parsing_core_raise(key: bytes | None, value: bytes | None) -> None:
    parsed = parse_record_bytes(key, value, 0, 0, TOPIC, STAND_IN_REGISTRY)
    assert parsed.outcome in ("change", "ignored", "quarantine")


STAND_IN_REGISTRY = registry_answering(avro_schema(VALUE_SCHEMA))


def test_no_damage_to_an_avro_record_makes_the_parsing_core_raise() -> None:
    """Bytes changed, removed and inserted in a real record: each one a change or a quarantined
    record (20,000 of these once gave 84% `invalid_avro`, 16% changes, a few `invalid_value`)."""
    value = avro_value(change_event("u", row(1), row(1))["payload"], VALUE_SCHEMA)
    written = io.BytesIO(b"\x00\x00\x00\x00\x02")
    written.seek(HEADER_BYTES)
    schemaless_writer(written, parse_schema(avro_schema(VALUE_SCHEMA)), value)
    good = written.getvalue()
    rng = random.Random(36)
    outcomes = set()
    for _ in range(2000):
        damaged = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            place, kind = rng.randrange(HEADER_BYTES, len(damaged)), rng.random()
            if kind < 0.5:
                damaged[place] = rng.randrange(256)
            elif kind < 0.75:
                del damaged[place]
            else:
                damaged.insert(place, rng.randrange(256))
        outcomes.add(parse_record_bytes(JSON_KEY, bytes(damaged), 0, 0, TOPIC, STAND_IN_REGISTRY).outcome)
    assert outcomes <= {"change", "quarantine"}
