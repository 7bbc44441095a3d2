"""Property tests: no input to the parsing core raises out of a UDF.

Every landed line becomes a `LandedRecord` (a reason when it is no record), every record exactly one
of a change, an ignored record or a quarantine reason, and every result fits the struct its Spark
UDF declares (`udfs.spark`): text Spark can encode as UTF-8, integers within `int` / `bigint`.

The inputs are arbitrary text and JSON, and near misses of each message the core knows: valid
Debezium envelopes (with and without the converter schema), MongoDB events, flattened records,
Qlik messages and kcat lines, with fields dropped, duplicated, or replaced by values of the wrong
type, huge integers, `NaN` and `1e400` literals, unpaired surrogates and deep nesting.

Examples are derandomized (the same ones every run, no example database) and bounded so that the
file runs in seconds.
"""

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.parsing_contract import (
    MAX_BIGINT,
    MAX_INT,
    check_landed_row,
    check_parsed,
    is_object_text,
)
from tests.qlik_messages import qlik_data_message, qlik_envelope, qlik_metadata_message
from udfs.events import ParsedRecord
from udfs.landing import LandedRecord, parse_kcat_line
from udfs.qlik import parse_qlik_record
from udfs.records import parse_record
from udfs.spark import parse_kcat_line_row, resolve_rows_row

FAST = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
THOROUGH = settings(FAST, max_examples=200)


# --- the contract, as the SQL calls the UDFs ----------------------------------------------


def checked(parsed: ParsedRecord) -> ParsedRecord:
    return check_parsed(parsed)


def parse_line(line: str) -> tuple[LandedRecord, ParsedRecord | None]:
    """A kcat line as the SQL parses it: landed, then parsed unless landing gave a reason."""
    landed = check_landed_row(parse_kcat_line_row(line))
    if landed.reason is not None:
        return landed, None
    assert landed.topic is not None and landed.partition is not None and landed.offset is not None
    return landed, checked(parse_record(landed.key, landed.payload, landed.partition, landed.offset, landed.topic))


# --- JSON with what json.dumps will not write -------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """A JSON token written as is: `NaN`, `1e400`, 10,000 nested arrays, `"\\ud800"`."""

    text: str


class Dup(dict[str, Any]):
    """An object written with its pairs and then `extra`: keys may repeat."""

    extra: tuple[tuple[str, Any], ...] = ()


def render(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Mapping):
        pairs = [*value.items(), *(value.extra if isinstance(value, Dup) else ())]
        return "{" + ",".join(f"{json.dumps(name)}:{render(item)}" for name, item in pairs) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(item) for item in value) + "]"
    return json.dumps(value)


def nested(depth: int, *, objects: bool = False) -> Raw:
    if objects:
        return Raw('{"a":' * depth + "1" + "}" * depth)
    return Raw("[" * depth + "]" * depth)


HOSTILE_LITERALS = [
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1e-400"),
    Raw("-0"),
    Raw(str(2**80)),
    Raw(str(-(2**80))),
    Raw(str(2**64)),
    Raw(str(2**63)),
    Raw(str(-(2**63) - 1)),
    Raw("9" * 300),
    # Fractions a double cannot hold: json_text reads them as Decimals, wherever they stand.
    Raw("123456789876543212345678987654321.110"),
    Raw("-0.1000000000000000055511151231257827"),
    Raw("4.9e-324"),
    Raw("1." + "0" * 5000 + "1"),
    Raw('"\\ud800"'),
    Raw('"x\\udfffy"'),
    Raw('"\\u0000"'),
    *(nested(depth) for depth in (254, 255, 600, 1000, 1023, 1024, 10_000)),
    *(nested(depth, objects=True) for depth in (300, 1022, 2000)),
]

FIELD_NAMES = [
    *("op", "source", "before", "after", "patch", "filter", "updateDescription", "updatedFields"),
    *("removedFields", "truncatedArrays", "size", "schema", "payload", "fields", "field", "type"),
    *("name", "parameters", "scale", "value", "items", "values", "optional", "status", "id", "_id"),
    *("ts_ms", "connector", "db", "table", "collection", "lsn", "sequence", "commit_lsn"),
    *("change_lsn", "ord", "snapshot", "txId", "transaction", "total_order", "data_collection_order"),
    *("file", "pos", "row", "event_serial_no", "scn", "commit_scn", "rs_id", "ssn", "__file", "__scn"),
    *("__op", "__deleted", "__table", "__collection", "__db", "__schema", "__lsn", "__source_ts_ms"),
    *("__ts_ms", "__connector", "$oid", "$date", "$numberLong", "$numberDouble", "$numberDecimal"),
    *("$binary", "$type", "$set", "$unset", "$v", "diff", "magic", "message", "messageSchemaId"),
    *("headers", "data", "beforeData", "operation", "changeMask", "columnMask", "changeSequence"),
    *("schemaId", "lineage", "tableStructure", "tableColumns", "ordinal", "primaryKeyPosition"),
    *("transactionEventCounter", "timestamp", "topic", "partition", "offset", "key", "key_error"),
]
TEXTS = [
    *("c", "r", "u", "d", "t", "m", "x", "", " ", "postgresql", "mongodb", "db2", "mysql", "qlik"),
    *("BEGIN", "END", "true", "false", "INSERT", "UPDATE", "DELETE", "REFRESH", "atMSG", "MD", "DT"),
    *("__debezium_unavailable_value", "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==", "²", "-1", "0x1f"),
    *("00000027:00000758:0003", "123", "1" * 25, "1" * 120, '{"id":1}', "[1]", "null", "a.0.b"),
    *("a.²", "a.99999999999", "2019-11-11T09:13:04.067", "0B", "zz", "struct", "array", "map"),
    *("io.debezium.time.Date", "io.debezium.time.MicroTimestamp", "io.debezium.data.VariableScaleDecimal"),
    *("org.apache.kafka.connect.data.Decimal", "5eb626b3452cd570b405bf7d", "shop.items.Value", "Ωμέγα"),
    *("mariadb", "sqlserver", "oracle", "mysql-bin.000003", "mysql-bin.", " 0x000024.00004a1e.0010 ", "0x"),
]

field_names = st.sampled_from(FIELD_NAMES) | st.text(max_size=8)
texts = st.sampled_from(TEXTS) | st.text(max_size=30)
integers = st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(
    [0, 1, -1, MAX_INT, MAX_INT + 1, MAX_BIGINT, MAX_BIGINT + 1, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**12]
)
scalars = st.none() | st.booleans() | integers | st.floats(allow_nan=False, allow_infinity=False) | texts
hostile_literals = st.sampled_from(HOSTILE_LITERALS)


def dup_objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Objects whose extra pairs repeat their keys: the last one wins (as in orjson and json)."""

    def build(pairs: list[tuple[str, Any]], extra: list[tuple[str, Any]]) -> Dup:
        value = Dup(pairs)
        value.extra = tuple((pairs[index % len(pairs)][0], item) for index, (_, item) in enumerate(extra))
        return value

    pair_lists = st.lists(st.tuples(field_names, children), min_size=1, max_size=3)
    return st.builds(build, pair_lists, pair_lists)


json_values: st.SearchStrategy[Any] = st.recursive(
    scalars | hostile_literals,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(field_names, children, max_size=5) | dup_objects(children)
    ),
    max_leaves=8,
)
plain_json = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(field_names, children, max_size=5),
    max_leaves=6,
)
# Copies: a mutation may add to a drawn [] or {} in place, which must not change the next draw.
wrong_values = st.sampled_from([None, True, 0, -1, 1.5, "", "text", [], {}, [1], {"a": 1}]).map(copy.deepcopy) | (
    hostile_literals
)


# --- valid messages, to be broken -------------------------------------------------------------

OID = "5eb626b3452cd570b405bf7d"
PG_SOURCE = {
    "version": "2.7.0",
    "connector": "postgresql",
    "name": "shop",
    "ts_ms": 1_700_000_000_000,
    "snapshot": "false",
    "db": "shop",
    "sequence": '["100","120"]',
    "schema": "public",
    "table": "items",
    "txId": 770,
    "lsn": 120,
    "xmin": None,
}
PG_CREATE = {
    "before": None,
    "after": {"id": 1, "name": "box"},
    "source": PG_SOURCE,
    "op": "c",
    "ts_ms": 1_700_000_000_005,
    "transaction": {"id": "770:120", "total_order": 1, "data_collection_order": 1},
}
PG_UPDATE = {
    **PG_CREATE,
    "op": "u",
    "before": {"id": 1, "name": "tin"},
    "after": {"id": 1, "name": "box", "notes": "__debezium_unavailable_value"},
}
DB2_SOURCE = {
    "connector": "db2",
    "db": "TESTDB",
    "schema": "DB2INST1",
    "table": "ITEMS",
    "commit_lsn": "00000027:00000758:0003",
    "change_lsn": "00000027:00000758:0002",
    "ts_ms": 1,
}
MYSQL_SOURCE = {
    "connector": "mysql",
    "db": "shop",
    "table": "items",
    "server_id": 223344,
    "file": "mysql-bin.000003",
    "pos": 1442,
    "row": 1,
    "snapshot": "false",
}
SQLSERVER_SOURCE = {
    "connector": "sqlserver",
    "db": "shop",
    "schema": "dbo",
    "table": "items",
    "commit_lsn": "00000027:00000758:0003",
    "change_lsn": "00000027:00000758:0002",
    "event_serial_no": 1,
}
ORACLE_SOURCE = {
    "connector": "oracle",
    "db": "ORCLPDB1",
    "schema": "SHOP",
    "table": "ITEMS",
    "scn": "18446744073709551617",
    "commit_scn": "18446744073709551618",
    "rs_id": " 0x000024.00004a1e.0010 ",
    "ssn": 0,
}
ITEM_SCHEMA = {
    "type": "struct",
    "name": "shop.public.items.Value",
    "fields": [
        {"type": "int32", "optional": False, "field": "id"},
        {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "field": "born"},
        {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "field": "seen"},
        {
            "type": "bytes",
            "optional": True,
            "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": "2"},
            "field": "price",
        },
        {
            "type": "struct",
            "optional": True,
            "name": "io.debezium.data.VariableScaleDecimal",
            "field": "weight",
            "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}],
        },
        {
            "type": "array",
            "optional": True,
            "items": {"type": "int32", "name": "io.debezium.time.Date"},
            "field": "days",
        },
        {"type": "map", "optional": True, "values": {"type": "string"}, "keys": {"type": "string"}, "field": "tags"},
    ],
}
ITEM_ROW = {
    "id": 1,
    "born": 19_723,
    "seen": 1_700_000_000_000_000,
    "price": "AOg=",
    "weight": {"scale": 1, "value": "Dg=="},
    "days": [0, 1],
    "tags": {"a": "b"},
}
PG_SCHEMA_CREATE = {
    "schema": {"type": "struct", "fields": [{**ITEM_SCHEMA, "field": "before"}, {**ITEM_SCHEMA, "field": "after"}]},
    "payload": {"before": None, "after": ITEM_ROW, "source": PG_SOURCE, "op": "r", "ts_ms": 5},
}
DEBEZIUM_BASES: list[Any] = [
    PG_CREATE,
    PG_UPDATE,
    {**PG_CREATE, "op": "d", "before": {"id": 1}, "after": None},
    {"before": None, "after": None, "source": PG_SOURCE, "op": "t", "ts_ms": 5},
    {"op": "m", "ts_ms": 5, "source": PG_SOURCE, "message": {"prefix": "p", "content": "Zm9v"}},
    {**PG_UPDATE, "source": DB2_SOURCE},
    {**PG_CREATE, "source": {**PG_SOURCE, "connector": "mysql", "schema": None}},
    PG_SCHEMA_CREATE,
    {"status": "BEGIN", "id": "571:53195829", "event_count": None, "data_collections": None, "ts_ms": 1},
    {**PG_UPDATE, "source": MYSQL_SOURCE},
    {**PG_UPDATE, "source": {**MYSQL_SOURCE, "connector": "mariadb"}},
    {**PG_UPDATE, "source": SQLSERVER_SOURCE},
    {**PG_UPDATE, "source": ORACLE_SOURCE},
]

MONGO_SOURCE = {"connector": "mongodb", "db": "shop", "collection": "orders", "ts_ms": 1000, "ord": 1, "rs": "rs0"}
MONGO_DOCUMENT = {
    "_id": {"$oid": OID},
    "n": {"$numberLong": "7"},
    "at": {"$date": 1_533_868_558_652},
    "items": [{"sku": "a"}, {"sku": "b"}],
    "price": {"$numberDecimal": "3.140"},
}
MONGO_BASES: list[Any] = [
    {"op": "c", "after": json.dumps(MONGO_DOCUMENT), "source": MONGO_SOURCE, "ts_ms": 1},
    {"op": "r", "after": json.dumps(MONGO_DOCUMENT), "source": MONGO_SOURCE, "ts_ms": 1},
    {
        "op": "u",
        "patch": json.dumps({"$v": 1, "$set": {"n": 8, "items.1.sku": "c"}, "$unset": {"at": True}}),
        "filter": json.dumps({"_id": {"$oid": OID}}),
        "source": MONGO_SOURCE,
    },
    {
        "op": "u",
        "patch": json.dumps({"$v": 2, "diff": {"u": {"n": 9}, "sitems": {"a": True, "l": 1, "u0": {}}}}),
        "filter": json.dumps({"_id": {"$oid": OID}}),
        "source": MONGO_SOURCE,
    },
    {"op": "u", "patch": json.dumps({"_id": {"$oid": OID}, "n": 1}), "source": MONGO_SOURCE},
    {
        "op": "u",
        "after": None,
        "source": MONGO_SOURCE,
        "updateDescription": {
            "updatedFields": json.dumps({"n": 10, "items.5": {"sku": "z"}}),
            "removedFields": ["at"],
            "truncatedArrays": [{"field": "items", "size": 1}],
        },
    },
    {"op": "d", "filter": json.dumps({"_id": {"$oid": OID}}), "source": MONGO_SOURCE},
    {"op": "d", "before": MONGO_DOCUMENT, "source": MONGO_SOURCE},
]
MONGO_KEYS = [json.dumps({"id": json.dumps({"$oid": OID})}), json.dumps({"id": "1004"}), json.dumps({"_id": 7})]

FLATTENED_BASES: list[Any] = [
    {
        "id": 1,
        "name": "box",
        "__op": "c",
        "__table": "items",
        "__db": "shop",
        "__lsn": 120,
        "__source_ts_ms": 1,
        "__deleted": "false",
    },
    {"id": 1, "name": "box", "__deleted": "true", "__ts_ms": 5},
    {"id": 1, "status": "BEGIN", "__op": "u", "__schema": "public", "__commit_lsn": "00000027:00000758:0003"},
    {"_id": {"$oid": OID}, "n": {"$numberLong": "7"}, "__collection": "orders", "__op": "r"},
    {"id": 1, "notes": "__debezium_unavailable_value", "__op": "t", "__table": "items"},
    {"schema": ITEM_SCHEMA, "payload": {**ITEM_ROW, "__op": "m"}},
    {"schema": ITEM_SCHEMA, "payload": ITEM_ROW},
    {"id": 1, "__op": "u", "__file": "mysql-bin.000003", "__pos": 1442, "__row": 1, "__snapshot": "false"},
    {
        "id": 1,
        "__op": "u",
        "__commit_scn": "18446744073709551618",
        "__scn": "18446744073709551617",
        "__rs_id": "0x1.2.3",
    },
    {"id": 1, "__op": "u", "__commit_lsn": "00000027:00000758:0003", "__event_serial_no": 2},
]

QLIK_METADATA = qlik_envelope(
    "MD",
    "S1",
    qlik_metadata_message("S1", "SALES", "CUSTOMERS", {"ID": ("INT4", 10, 0, 0, 1), "NAME": ("STRING", 20, 0, 0, 0)}),
)
QLIK_HEADERS: dict[str, Any] = {
    "changeSequence": "20190502181731000000000000000000197",
    "timestamp": "2019-05-02T18:17:29.000",
    "transactionId": "0001",
    "changeMask": "02",
    "columnMask": "03",
    "transactionEventCounter": 1,
    "transactionLastEvent": True,
}


def qlik_data_base(operation: str) -> dict[str, Any]:
    """An enveloped data message of SALES.CUSTOMERS, ID 14, with `operation`."""
    message = qlik_data_message(operation, {"ID": "14", "NAME": "Ann"}, {"ID": "14", "NAME": "Anne"}, **QLIK_HEADERS)
    return qlik_envelope("DT", "S1", message)


QLIK_DATA = qlik_data_base("UPDATE")
QLIK_BASES: list[Any] = [
    QLIK_METADATA,
    QLIK_DATA,
    QLIK_METADATA["message"],
    QLIK_DATA["message"],
    qlik_data_base("REFRESH"),
    qlik_data_base("DELETE"),
]

DEBEZIUM_KEYS = [
    '{"id":1}',
    json.dumps({"schema": {"type": "struct", "fields": [{"type": "int32", "field": "id"}]}, "payload": {"id": 1}}),
    json.dumps({"schema": {"type": "struct", "fields": [ITEM_SCHEMA["fields"][1]]}, "payload": {"born": 3}}),
]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value: the root, then each member and element, depth first."""
    yield prefix
    if isinstance(value, Mapping):
        for name, item in value.items():
            yield from paths(item, (*prefix, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


MUTATIONS = ("replace", "replace", "wrong", "drop", "add", "stringify", "duplicate")


def mutate(data: st.DataObject, base: Any, *, values: st.SearchStrategy[Any] = json_values) -> Any:
    """One to three breakages of a valid message, each at a place drawn from its current shape."""
    message = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(min_value=1, max_value=3), label="mutations")):
        path = data.draw(st.sampled_from(list(paths(message))), label="path")
        kind = data.draw(st.sampled_from(MUTATIONS), label="kind")
        target = at(message, path)
        if kind in ("replace", "wrong", "stringify"):
            if kind == "stringify":
                new: Any = render(target)
            else:
                new = data.draw(values if kind == "replace" else wrong_values, label="value")
            if not path:
                message = new
            else:
                at(message, path[:-1])[path[-1]] = new
        elif kind == "drop" and path:
            parent = at(message, path[:-1])
            del parent[path[-1]]
        elif kind == "add" and isinstance(target, dict):
            target[data.draw(field_names, label="name")] = data.draw(values, label="value")
        elif kind == "duplicate" and isinstance(target, dict) and target:
            twin = Dup(target)
            name = data.draw(st.sampled_from(list(target)), label="name")
            twin.extra = ((name, data.draw(values, label="value")),)
            if not path:
                message = twin
            else:
                at(message, path[:-1])[path[-1]] = twin
    return message


def near_miss(data: st.DataObject, bases: list[Any], **options: Any) -> str:
    base = data.draw(st.sampled_from(bases), label="base")
    broken = data.draw(st.booleans(), label="broken")
    return render(mutate(data, base, **options) if broken else base)


def kafka_key(data: st.DataObject, valid_keys: list[str]) -> str | None:
    choice = data.draw(st.sampled_from(["valid", "valid", "broken", "text", "none", "json"]), label="key kind")
    if choice == "valid":
        return data.draw(st.sampled_from(valid_keys), label="key")
    if choice == "broken":
        return render(mutate(data, json.loads(data.draw(st.sampled_from(valid_keys), label="key"))))
    if choice == "text":
        return data.draw(texts, label="key")
    if choice == "json":
        return render(data.draw(json_values, label="key"))
    return None


def coordinates(data: st.DataObject) -> tuple[int, int, str]:
    """(partition, offset, topic) as the SQL passes them: a landed record's identity."""
    partition = data.draw(st.integers(min_value=0, max_value=MAX_INT), label="partition")
    offset = data.draw(st.integers(min_value=0, max_value=MAX_BIGINT), label="offset")
    topic = data.draw(st.sampled_from(["shop.public.items", "t", "a.b.c.d", "."]) | st.text(min_size=1), label="topic")
    return partition, offset, topic


# --- properties -------------------------------------------------------------------------------


@FAST
@given(key=st.none() | st.text(max_size=60), payload=st.none() | st.text(max_size=200), data=st.data())
def test_arbitrary_text_never_raises(key: str | None, payload: str | None, data: st.DataObject) -> None:
    partition, offset, topic = coordinates(data)
    checked(parse_record(key, payload, partition, offset, topic))
    checked(parse_qlik_record(payload, key, partition, offset))
    if payload is not None:
        parse_line(payload)


@FAST
@given(payload=json_values, key=json_values, wrap=st.booleans(), data=st.data())
def test_arbitrary_json_never_raises(payload: Any, key: Any, wrap: bool, data: st.DataObject) -> None:
    if wrap:
        payload = {"schema": data.draw(json_values, label="schema"), "payload": payload}
    partition, offset, topic = coordinates(data)
    checked(parse_record(render(key), render(payload), partition, offset, topic))


def test_the_valid_debezium_messages_are_changes_or_ignored() -> None:
    """The near misses start from real messages (else the properties would test little)."""
    parsed = [check_parsed(parse_record(DEBEZIUM_KEYS[0], render(base), 0, 1, "t")) for base in DEBEZIUM_BASES]
    assert [record.op or record.ignore_class for record in parsed] == [
        *("c", "u", "d", "t", "logical_decoding_message", "u", "c", "r", "transaction_marker", "u", "u", "u", "u")
    ]


@THOROUGH
@given(data=st.data())
def test_near_miss_debezium_envelopes(data: st.DataObject) -> None:
    payload = near_miss(data, DEBEZIUM_BASES)
    partition, offset, topic = coordinates(data)
    checked(parse_record(kafka_key(data, DEBEZIUM_KEYS), payload, partition, offset, topic))


@THOROUGH
@given(data=st.data())
def test_near_miss_mongodb_events_and_their_rows(data: st.DataObject) -> None:
    """A key's events, some broken, parsed and then folded into rows as the SQL does."""
    key = kafka_key(data, MONGO_KEYS)
    events = []
    for offset in range(data.draw(st.integers(min_value=1, max_value=4), label="events")):
        parsed = checked(parse_record(key, near_miss(data, MONGO_BASES), 0, offset, "shop.orders"))
        if parsed.outcome == "change" and parsed.op != "t":
            events.append(
                {
                    "op": parsed.op,
                    "after": parsed.after,
                    "unavailable_columns": parsed.unavailable_columns,
                    "patch": parsed.patch,
                }
            )
    rows = resolve_rows_row(events)
    assert len(rows) == len(events)
    assert all(row is None or is_object_text(row) for row in rows)


def test_the_valid_mongodb_events_are_changes() -> None:
    parsed = [parse_record(MONGO_KEYS[0], render(base), 0, 1, "t") for base in MONGO_BASES]
    assert [check_parsed(record).op for record in parsed] == ["c", "r", "u", "u", "u", "u", "d", "d"]
    assert all(record.outcome == "change" for record in parsed)


@THOROUGH
@given(data=st.data())
def test_near_miss_flattened_records(data: st.DataObject) -> None:
    payload = near_miss(data, FLATTENED_BASES)
    partition, offset, topic = coordinates(data)
    checked(parse_record(kafka_key(data, DEBEZIUM_KEYS), payload, partition, offset, topic))


def test_the_valid_flattened_records_are_changes() -> None:
    parsed = [check_parsed(parse_record('{"id":1}', render(base), 0, 1, "shop.items")) for base in FLATTENED_BASES]
    assert [(record.outcome, record.op or record.ignore_class) for record in parsed] == [
        ("change", "c"),
        ("change", "d"),
        ("change", "u"),
        ("change", "r"),
        ("change", "t"),
        ("ignored", "logical_decoding_message"),
        ("change", "u"),
        *[("change", "u")] * 3,
    ]


@THOROUGH
@given(data=st.data())
def test_near_miss_qlik_messages(data: st.DataObject) -> None:
    """Each message parsed as the SQL does: first alone, then (`cdc_parse_qlik_record`) with the
    metadata message it was bound to: the valid one, a broken one, or none."""
    kind = data.draw(st.sampled_from(["none", "valid", "broken"]), label="metadata")
    metadata = None if kind == "none" else render(QLIK_METADATA if kind == "valid" else mutate(data, QLIK_METADATA))
    payload = near_miss(data, QLIK_BASES)
    partition, offset, topic = coordinates(data)
    checked(parse_record(None, payload, partition, offset, topic))
    checked(parse_qlik_record(payload, metadata, partition, offset))


def test_the_valid_qlik_messages_parse() -> None:
    metadata = render(QLIK_METADATA)
    parsed = [check_parsed(parse_qlik_record(render(base), metadata, 0, 1)) for base in QLIK_BASES]
    assert [record.op or record.ignore_class for record in parsed] == [
        "metadata_message",
        "u",
        "metadata_message",
        "u",
        "r",
        "d",
    ]


HEADER_NAMES = st.sampled_from(["h", "", "trace-id"]) | st.text(max_size=5)


def kcat_line(data: st.DataObject) -> str:
    """A line as `kcat -C -J` writes it, near misses included: fields of the wrong type, headers
    in both shapes (or neither), keys and payloads as text or as JSON values (Avro), cut short."""
    base = data.draw(st.sampled_from([DEBEZIUM_BASES, MONGO_BASES, FLATTENED_BASES, QLIK_BASES]), label="format")
    payload = st.none() | st.just(near_miss(data, base)) | json_values | texts
    headers = (
        st.lists(st.none() | HEADER_NAMES | json_values, max_size=5)
        | st.dictionaries(HEADER_NAMES, st.lists(st.none() | texts, max_size=2) | json_values, max_size=3)
        | wrong_values
    )
    record: dict[str, Any] = {
        "topic": data.draw(st.sampled_from(["shop.public.items", ""]) | texts | wrong_values, label="topic"),
        "partition": data.draw(integers | wrong_values, label="partition"),
        "offset": data.draw(integers | wrong_values, label="offset"),
        "tstype": "create",
        "ts": data.draw(integers | wrong_values, label="ts"),
        "broker": 0,
        "headers": data.draw(headers, label="headers"),
        "key": data.draw(st.sampled_from([*DEBEZIUM_KEYS, *MONGO_KEYS]) | st.none() | json_values, label="key"),
        "payload": data.draw(payload, label="payload"),
    }
    for error in ("key_error", "payload_error"):
        if data.draw(st.integers(min_value=0, max_value=9), label=error) == 0:
            record[error] = data.draw(texts | json_values, label="error")
    if data.draw(st.booleans(), label="mutate"):
        record = mutate(data, record)
    line = render(record)
    if data.draw(st.integers(min_value=0, max_value=5), label="cut") == 0:
        line = line[: data.draw(st.integers(min_value=0, max_value=len(line)), label="cut at")]
    return line


@THOROUGH
@given(data=st.data())
def test_kcat_lines_never_raise(data: st.DataObject) -> None:
    parse_line(kcat_line(data))


def test_parse_kcat_line_row_passes_none_through() -> None:
    assert parse_kcat_line_row(None) is None


PATHS = st.sampled_from(["a", "a.0", "a.1.b", "a.²", "a.99999999999", "a." + "9" * 30, "a..b", "", "0", "b.-1"]) | (
    st.lists(st.sampled_from(["a", "b", "0", "1", "2", "x", "²"]), min_size=1, max_size=4).map(".".join)
)
PATCHES = st.fixed_dictionaries(
    {
        "set": st.dictionaries(PATHS, scalars | st.just([]) | st.just({}), max_size=3),
        "unset": st.lists(PATHS, max_size=3),
        "truncate": st.dictionaries(PATHS, st.integers(min_value=0, max_value=3), max_size=2),
    }
)
ROWS = st.dictionaries(st.sampled_from(["a", "b", "c"]), plain_json, max_size=2).map(render)
KEY_EVENTS = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["c", "r", "u", "d"]),
        "after": st.none() | ROWS,
        "unavailable_columns": st.none() | st.lists(st.sampled_from(["a", "b", "z"]), max_size=2),
        "patch": st.none() | PATCHES.map(render),
    }
)


@FAST
@given(events=st.lists(KEY_EVENTS, max_size=5))
@example(
    events=[
        {"op": "c", "after": '{"a":[1]}', "unavailable_columns": None, "patch": None},
        {
            "op": "u",
            "after": None,
            "unavailable_columns": None,
            "patch": '{"set":{"a.99999999999":1},"unset":["a.²"],"truncate":{}}',
        },
    ]
)
def test_resolve_rows_never_raises(events: list[dict[str, Any]]) -> None:
    rows = resolve_rows_row(events)
    assert len(rows) == len(events)
    for event, row in zip(events, rows, strict=True):
        assert (row is None) == (event["op"] == "d" or (event["after"] is None and event["patch"] is None))
        assert row is None or is_object_text(row)


# --- the bugs these properties found, one minimal input each ---------------------------------

KEY = '{"id":1}'


def envelope(**fields: Any) -> str:
    body = {"op": "c", "source": {"connector": "postgresql", "schema": "public", "table": "t"}, "after": {"id": 1}}
    body.update(fields)
    return render(body)


def converter(schema: Any, **fields: Any) -> str:
    return render(
        {
            "schema": {"fields": [{"field": "after", "type": "struct", "fields": [schema]}]},
            "payload": json.loads(envelope(**fields)),
        }
    )


@pytest.mark.parametrize(
    ("key", "payload", "expected"),
    [
        # orjson reads integers beyond 64 bits as floats: they must stay exact, in rows and keys.
        (KEY, envelope(after={"id": 2**80}), ("change", None)),
        ('{"id":18446744073709551617}', envelope(), ("change", None)),
        # The json fallback took 1e400 as infinity (written as null) and "\ud800" as unwritable text.
        (KEY, envelope(after=Raw('{"x":1e400}')), ("quarantine", "invalid_json")),
        (KEY, envelope(after=Raw('{"x":"\\ud800"}')), ("quarantine", "invalid_json")),
        # Positions: "²" passes str.isdigit but not int(); int("-1", 16) is -1 (ValueError out).
        (KEY, envelope(source={"connector": "postgresql", "table": "t", "lsn": "²"}), ("change", None)),
        (KEY, envelope(source={"connector": "db2", "table": "t", "commit_lsn": "-1"}), ("change", None)),
        # Malformed converter schemas: TypeError, KeyError, AttributeError out.
        (KEY, render({"schema": {"fields": 5}, "payload": json.loads(envelope())}), ("change", None)),
        (KEY, render({"schema": {"fields": [{}]}, "payload": json.loads(envelope())}), ("change", None)),
        (KEY, converter({"field": "id", "type": "array", "items": 5}, after={"id": [1]}), ("change", None)),
        (
            KEY,
            converter({"field": "id", "name": "io.debezium.data.VariableScaleDecimal"}, after={"id": {"scale": 1}}),
            ("quarantine", "invalid_value"),
        ),
        (
            KEY,
            converter(
                {"field": "id", "name": "org.apache.kafka.connect.data.Decimal", "parameters": [1]},
                after={"id": "AQ=="},
            ),
            ("quarantine", "invalid_value"),
        ),
        (
            KEY,
            converter(
                {"field": "id", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": 10**9}},
                after={"id": "AQ=="},
            ),
            ("quarantine", "invalid_value"),
        ),
        # A MongoDB flattened row whose only column looks like a wrapper: TypeError out.
        (KEY, render({"__collection": "c", "$symbol": "a_id"}), ("change", None)),
        # A change must name its table (the build's not_null test on source_table).
        (KEY, envelope(source={"connector": "postgresql"}), ("quarantine", "invalid_envelope")),
    ],
)
def test_minimal_inputs_of_fixed_bugs(key: str, payload: str, expected: tuple[str, str | None]) -> None:
    parsed = check_parsed(parse_record(key, payload, 0, 1, "t"))
    assert (parsed.outcome, parsed.reason) == expected


def test_wide_integers_stay_exact() -> None:
    parsed = parse_record('{"id":18446744073709551617}', envelope(after={"id": 2**80, "x": -(2**63) - 1}), 0, 1, "t")
    assert parsed.row_key == '{"id":18446744073709551617}'
    assert parsed.after == f'{{"id":{2**80},"x":{-(2**63) - 1}}}'


def test_values_spark_cannot_hold_are_dropped_not_passed_on() -> None:
    parsed = parse_record(KEY, envelope(ts_ms=2**64 - 1, transaction={"id": "x", "total_order": 2**63}), 0, 1, "t")
    assert (parsed.event_ts_ms, parsed.source_ts_ms, parsed.transaction_total_order) == (None, None, None)
    assert parse_record(KEY, envelope(ts_ms=MAX_BIGINT), 0, 1, "t").event_ts_ms is None  # timestamp_millis overflows


@pytest.mark.parametrize(
    "line",
    [
        '{"topic":"t","partition":0,"offset":1,"payload":' + nested(1000).text + "}",
        '{"topic":"t","partition":0,"offset":1,"headers":["h",' + nested(1000).text + "]}",
        '{"topic":"t","partition":-1,"offset":1}',
        '{"topic":"t","partition":0,"offset":-1}',
        '{"topic":"t","partition":2147483648,"offset":1}',
        '{"topic":"t","partition":0,"offset":9223372036854775808}',
        '{"topic":"","partition":0,"offset":1}',
    ],
    ids=["deep payload", "deep header", "partition -1", "offset -1", "partition 2**31", "offset 2**63", "topic ''"],
)
def test_kcat_lines_that_raised_or_passed_values_spark_cannot_hold(line: str) -> None:
    landed = check_landed_row(parse_kcat_line_row(line))
    assert landed.reason == "invalid_landing_line"


def test_kafka_timestamp_beyond_timestamp_millis_is_dropped() -> None:
    landed = parse_kcat_line('{"topic":"t","partition":0,"offset":1,"ts":9223372036854775807}')
    assert (landed.reason, landed.kafka_ts_ms) == (None, None)


def test_qlik_ordinal_of_a_trillion_does_not_allocate_its_mask() -> None:
    """masks.columns_for_mask built `1 << (ordinal - 1)`: 125 GB for this ordinal (MemoryError)."""
    metadata = json.loads(render(QLIK_METADATA))
    metadata["message"]["tableStructure"]["tableColumns"]["NAME"]["ordinal"] = 10**12
    parsed = check_parsed(parse_qlik_record(render(QLIK_DATA), render(metadata), 0, 1))
    assert (parsed.op, parsed.changed_columns, parsed.unavailable_columns) == ("u", (), ("NAME",))
    assert parsed.detail == "mask bits without a column: changeMask 1, columnMask 1"


@pytest.mark.parametrize(
    "payload",
    [
        envelope(op="d", before={"id": 1}, after={}),
        envelope(op="t", after={"id": 1}),
        render(
            {"op": "d", "after": "{}", "filter": '{"_id":1}', "source": {"connector": "mongodb", "collection": "c"}}
        ),
    ],
    ids=["debezium delete", "debezium truncate", "mongodb delete"],
)
def test_a_delete_or_truncate_with_an_after_image_is_an_invalid_envelope(payload: str) -> None:
    """It came out as a change whose after image contradicts its op (found by duplicate keys)."""
    parsed = check_parsed(parse_record(KEY, payload, 0, 1, "t"))
    assert (parsed.outcome, parsed.reason) == ("quarantine", "invalid_envelope")


# --- numbers beyond bigint in Qlik counters and transaction markers ----------------------------


def test_qlik_transaction_event_counter_beyond_bigint() -> None:
    data = json.loads(render(QLIK_DATA))
    data["message"]["headers"]["transactionEventCounter"] = 2**63
    check_parsed(parse_qlik_record(render(data), render(QLIK_METADATA), 0, 1))


def test_transaction_marker_ts_ms_beyond_timestamp_millis() -> None:
    check_parsed(parse_record(None, '{"status":"BEGIN","id":"1","ts_ms":9223372036854775807}', 0, 1, "t"))


def test_transaction_marker_event_count_beyond_bigint() -> None:
    marker = '{"status":"END","id":"1","event_count":9223372036854775808,"data_collections":[]}'
    check_parsed(parse_record(None, marker, 0, 1, "t"))
