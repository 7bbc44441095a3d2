import json
from typing import Any

import pytest

from tests.corpus import corpus_lines
from udfs.events import ParsedRecord
from udfs.flattened import is_flattened, is_metadata, parse_flattened
from udfs.positions import kafka_sort_key, sort_key
from udfs.records import parse_record

EVOLUTION = "paimon-debezium-schemaevolution"
KEY = '{"id":1}'


def flatten(line: str, *, add_fields: bool) -> tuple[str, str]:
    """What ExtractNewRecordState makes of an envelope with `delete.handling.mode=rewrite` and, when
    `add_fields`, `add.fields=op,db,table,source.ts_ms`: (Kafka key, flattened value)."""
    envelope = json.loads(line)
    image = envelope["before"] if envelope["op"] == "d" else envelope["after"]
    record = dict(image)
    if add_fields:
        source = envelope["source"]
        record.update(__op=envelope["op"], __db=source["db"], __table=source["table"], __source_ts_ms=source["ts_ms"])
    record["__deleted"] = "true" if envelope["op"] == "d" else "false"
    return json.dumps({"id": image["id"]}), json.dumps(record)


def evolution_batches() -> list[list[str]]:
    return [
        [line for line in corpus_lines(EVOLUTION, f"debezium-data-{number}.txt") if line.startswith("{")]
        for number in (1, 2, 3)
    ]


def expected_states() -> dict[str, list[list[str]]]:
    """expected.txt: `batch|id|name|description|weight[|age[|address]]` rows, by batch."""
    states: dict[str, list[list[str]]] = {}
    for line in corpus_lines(EVOLUTION, "expected.txt"):
        if not line.startswith("#") and line[0].isdigit():
            batch, *values = line.split("|")
            states.setdefault(batch, []).append(values)
    return states


def current_state(records: list[ParsedRecord]) -> dict[str, dict[str, Any]]:
    """The last event of each key in position order; deleted keys dropped."""
    last: dict[str, ParsedRecord] = {}
    for record in sorted(records, key=lambda record: record.position or ""):
        last[record.row_key or ""] = record
    return {key: json.loads(record.after or "") for key, record in last.items() if record.op != "d"}


def as_text(row: dict[str, Any], columns: list[str]) -> list[str]:
    return [str(row[name]) if row.get(name) is not None else "NULL" for name in columns]


@pytest.mark.parametrize("add_fields", [True, False])
def test_flattened_paimon_schema_evolution_replays_to_the_expected_tables(add_fields: bool) -> None:
    columns = ["id", "name", "description", "weight", "age", "address"]
    records: list[ParsedRecord] = []
    topic = "mysql_binlog_source.test.product"
    for batch, lines in enumerate(evolution_batches(), start=1):
        for line in lines:
            key, value = flatten(line, add_fields=add_fields)
            records.append(parse_record(key, value, 0, len(records), topic))
        expected = expected_states()[str(batch)]
        width = len(expected[0])
        state = current_state(records)
        assert sorted(as_text(row, columns[:width]) for row in state.values()) == expected
    assert {(record.source_db, record.source_table) for record in records} == {
        ("test" if add_fields else None, "test.product")
    }
    assert [record.op for record in records][-4:] == (["c", "d", "u", "c"] if add_fields else ["u", "d", "u", "u"])


def test_flattened_tombstone_between_records_is_ignored() -> None:
    lines = [
        line
        for name in ("nullvalue-debezium-data-1.txt", "nullvalue-debezium-data-2.txt")
        for line in corpus_lines(EVOLUTION, name)
        if line.startswith("{")
    ]
    (key1, value1), (key2, value2) = (flatten(line, add_fields=True) for line in lines)
    records = [parse_record(key1, value1, 0, 0), parse_record(key1, None, 0, 1), parse_record(key2, value2, 0, 2)]
    assert [record.outcome for record in records] == ["change", "ignored", "change"]
    state = current_state([record for record in records if record.outcome == "change"])
    assert sorted(as_text(row, ["id", "value"]) for row in state.values()) == [["1", "A"], ["2", "B"]]


def test_metadata_fields_are_not_columns() -> None:
    value = {
        "id": 1,
        "__op": "c",
        "__table": "items",
        "__source_ts_ms": 5,
        "__v": 3,
        "__lsn": 7,
        "__transaction_id": "x",
    }
    parsed = parse_record(KEY, json.dumps(value), 0, 0)
    assert json.loads(parsed.after or "") == {"id": 1, "__v": 3}
    assert (parsed.source_ts_ms, parsed.source_lsn, parsed.transaction_id) == (5, 7, "x")
    assert [name for name in value if is_metadata(name)] == [
        "__op",
        "__table",
        "__source_ts_ms",
        "__lsn",
        "__transaction_id",
    ]


@pytest.mark.parametrize(
    ("metadata", "op"),
    [
        ({"__deleted": "true"}, "d"),
        ({"__deleted": True, "__op": "d"}, "d"),
        ({"__deleted": "false"}, "u"),
        ({"__op": "c", "__deleted": "false"}, "c"),
        ({"__op": "r"}, "r"),
        ({"__op": "u"}, "u"),
        ({"__op": "d"}, "d"),
    ],
)
def test_op_from_deleted_flag_then_op_field_else_an_upsert(metadata: dict[str, Any], op: str) -> None:
    parsed = parse_record(KEY, json.dumps({"id": 1, "name": "x", **metadata}), 0, 0)
    assert parsed.op == op
    image = json.loads((parsed.before if op == "d" else parsed.after) or "")
    assert image == {"id": 1, "name": "x"}
    assert parsed.after is None if op == "d" else parsed.before is None
    assert parsed.changed_columns == (("id", "name") if op in "cr" else None)


def test_truncate_needs_no_key_and_a_logical_decoding_message_is_ignored() -> None:
    truncate = parse_record(None, json.dumps({"__op": "t", "__schema": "public", "__table": "items"}), 0, 0)
    assert (truncate.outcome, truncate.op, truncate.row_key, truncate.source_table) == (
        "change",
        "t",
        None,
        "public.items",
    )
    message = parse_record(None, json.dumps({"__op": "m"}), 0, 0)
    assert (message.outcome, message.ignore_class) == ("ignored", "logical_decoding_message")


@pytest.mark.parametrize(
    ("metadata", "topic", "table"),
    [
        ({"__db": "shop", "__schema": "public", "__table": "items"}, "srv.x.y", "public.items"),
        ({"__db": "shop", "__table": "items"}, None, "shop.items"),
        ({"__db": "shop", "__collection": "orders"}, None, "shop.orders"),
        ({"__op": "c"}, "srv.public.items", "public.items"),
        ({"__op": "c"}, "items", "items"),
        ({"__op": "c"}, None, None),
    ],
)
def test_table_from_metadata_else_from_the_topic(
    metadata: dict[str, Any], topic: str | None, table: str | None
) -> None:
    body = {"id": 1, "_id": 1, **metadata}
    assert parse_record(KEY, json.dumps(body), 0, 0, topic).source_table == table


def test_converter_schema_named_value_marks_a_flattened_record_decodes_it_and_names_its_table() -> None:
    schema = {
        "type": "struct",
        "name": "srv.public.items.Value",
        "fields": [
            {"type": "int32", "field": "id"},
            {"type": "int32", "name": "io.debezium.time.Date", "field": "born"},
        ],
    }
    payload = json.dumps({"schema": schema, "payload": {"id": 1, "born": 1}})
    parsed = parse_record(KEY, payload, 0, 0)
    assert (parsed.outcome, parsed.op, parsed.source_table) == ("change", "u", "public.items")
    assert parsed.after == '{"id":1,"born":"1970-01-02"}'


def test_detection() -> None:
    assert is_flattened({"id": 1, "__deleted": "false"})
    assert is_flattened({"id": 1, "__source_ts_ms": 1})
    assert not is_flattened({"id": 1, "__v": 0})
    assert not is_flattened({"id": 1})
    assert not is_flattened({"op": "c", "source": {}, "__op": "c"})
    assert not is_flattened(
        {"id": 1}, {"type": "struct", "name": "io.debezium.connector.common.TransactionMetadataValue"}
    )
    assert parse_record(KEY, '{"id": 1, "name": "x"}', 0, 0).reason == "not_an_envelope"


def test_a_row_with_status_and_id_columns_is_not_taken_for_a_transaction_marker() -> None:
    parsed = parse_record(KEY, json.dumps({"id": "7", "status": "BEGIN", "__op": "c"}), 0, 0)
    assert (parsed.outcome, parsed.op) == ("change", "c")


def test_a_table_with_an_op_column_is_flattened_not_an_envelope() -> None:
    parsed = parse_record(KEY, json.dumps({"id": 1, "op": "sell", "__op": "u"}), 0, 0)
    assert (parsed.outcome, json.loads(parsed.after or "")) == ("change", {"id": 1, "op": "sell"})


def test_position_from_lsn_else_kafka() -> None:
    with_lsn = parse_record(KEY, json.dumps({"id": 1, "__op": "u", "__lsn": 42}), 3, 9)
    assert with_lsn.position == sort_key("s", (42,))
    without = parse_record(KEY, json.dumps({"id": 1, "__op": "u", "__source_ts_ms": 5}), 3, 9)
    assert without.position == kafka_sort_key(3, 9)
    db2 = {"id": 1, "__op": "u", "__commit_lsn": "00000027:00000758:0003", "__change_lsn": "00000027:00000758:0005"}
    assert parse_record(KEY, json.dumps(db2), 0, 0).position == sort_key("s", (0x27, 0x758, 3, 0x27, 0x758, 5))


# Flattened records of one row in source order, each with the position fields ExtractNewRecordState
# copies in with `add.fields` (named by `__connector` or not).
FLATTENED_IN_SOURCE_ORDER: dict[str, list[dict[str, object]]] = {
    "mysql": [
        {"__op": "r", "__snapshot": "true", "__file": "mysql-bin.000009", "__pos": 157, "__row": 0},
        {"__op": "u", "__snapshot": "false", "__file": "mysql-bin.000009", "__pos": 157, "__row": 0},
        {"__op": "u", "__file": "mysql-bin.000009", "__pos": 1442, "__row": 1},
        {"__op": "u", "__file": "mysql-bin.000010", "__pos": 4, "__row": 0},
    ],
    "mariadb by name": [
        {"__op": "u", "__connector": "mariadb", "__source_file": "mariadb-bin.000009", "__source_pos": 700},
        {"__op": "u", "__connector": "mariadb", "__source_file": "mariadb-bin.000010", "__source_pos": 4},
    ],
    "sqlserver": [
        {
            "__op": "u",
            "__commit_lsn": "00000027:00000758:0003",
            "__change_lsn": "00000027:00000750:0002",
            "__event_serial_no": 1,
        },
        {
            "__op": "u",
            "__commit_lsn": "00000027:000009ff:0001",
            "__change_lsn": "00000027:000009f0:0002",
            "__event_serial_no": 1,
        },
        {
            "__op": "u",
            "__commit_lsn": "00000027:000009ff:0001",
            "__change_lsn": "00000027:000009f0:0002",
            "__event_serial_no": 2,
        },
    ],
    "oracle": [
        {"__op": "u", "__commit_scn": "9223372036854775808", "__scn": "9223372036854775800", "__rs_id": "0x1.2.10"},
        {"__op": "u", "__commit_scn": "9223372036854775808", "__scn": "9223372036854775800", "__rs_id": "0x1.3.10"},
        {"__op": "u", "__commit_scn": "18446744073709551618", "__scn": "18446744073709551617", "__rs_id": "0x1.1.10"},
    ],
}


@pytest.mark.parametrize("connector", list(FLATTENED_IN_SOURCE_ORDER))
def test_flattened_records_at_reversed_offsets_keep_their_source_order(connector: str) -> None:
    records = FLATTENED_IN_SOURCE_ORDER[connector]
    offsets = range(len(records), 0, -1)
    parsed = [
        parse_record(KEY, json.dumps({"id": 1, **record}), 0, offset)
        for record, offset in zip(records, offsets, strict=True)
    ]
    assert [record.outcome for record in parsed] == ["change"] * len(records)
    positions = [record.position or "" for record in parsed]
    assert all(position.startswith("s:") for position in positions)
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def test_flattened_position_fields_are_metadata_not_columns() -> None:
    value = {"id": 1, "__op": "u", "__file": "mysql-bin.000003", "__pos": 157, "__row": 0, "__scn": "5", "__ssn": 0}
    assert parse_record(KEY, json.dumps(value), 0, 0).after == '{"id":1}'


def test_mongodb_flattened_document_unwraps_and_keys_on_id() -> None:
    value = {
        "_id": {"$oid": "ab12"},
        "qty": {"$numberLong": "3"},
        "__op": "c",
        "__db": "shop",
        "__collection": "orders",
    }
    parsed = parse_record('{"id": "{\\"$oid\\": \\"ab12\\"}"}', json.dumps(value), 0, 0)
    assert (parsed.connector, parsed.source_table, parsed.row_key) == ("mongodb", "shop.orders", '{"_id":"ab12"}')
    assert parsed.after == '{"_id":"ab12","qty":3}'
    timed = {**value, "__source_ts_ms": 1000, "__source_ord": 4}
    assert parse_record(None, json.dumps(timed), 0, 0).position == sort_key("s", (1000, 4))


def test_snapshot_and_envelope_time() -> None:
    value = {"id": 1, "__op": "r", "__snapshot": "last", "__ts_ms": 9, "__source_ts_ms": 5}
    parsed = parse_flattened(json.loads(json.dumps(value)), None, KEY, 0, 0)
    assert (parsed.source_snapshot, parsed.source_ts_ms, parsed.event_ts_ms) == ("last", 5, 9)
    no_source_time = parse_flattened({"id": 1, "__ts_ms": 9}, None, KEY, 0, 0)
    assert no_source_time.source_ts_ms == 9


def test_toast_placeholder_is_unavailable() -> None:
    parsed = parse_record(KEY, json.dumps({"id": 1, "note": "__debezium_unavailable_value", "__op": "u"}), 0, 0)
    assert parsed.unavailable_columns == ("note",)


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        (KEY, {"id": 1, "__op": "x"}, "unknown_op"),
        (None, {"id": 1, "__op": "c"}, "missing_key"),
        ("plain", {"id": 1, "__deleted": "true"}, "missing_key"),
    ],
)
def test_bad_flattened_records_get_a_reason(key: str | None, value: dict[str, Any], reason: str) -> None:
    parsed = parse_record(key, json.dumps(value), 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", reason)
