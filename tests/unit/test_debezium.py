import json

import pytest

from tests.corpus import corpus_lines
from udfs.positions import kafka_sort_key, sort_key
from udfs.records import parse_record

POSTGRES_DOCS = corpus_lines("debezium-docs", "postgresql-examples.jsonl")
DB2_DOCS = corpus_lines("debezium-docs", "db2-examples.jsonl")
KEY = '{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}]},"payload":{"id":1}}'


def envelope(op: str, **fields: object) -> str:
    source = {"connector": "postgresql", "db": "shop", "schema": "public", "table": "items", "ts_ms": 1000, "lsn": 42}
    body: dict[str, object] = {"op": op, "source": source, "ts_ms": 1005, "before": None, "after": None}
    body.update(fields)
    return json.dumps(body)


def test_postgres_create_with_schema() -> None:
    parsed = parse_record(KEY, POSTGRES_DOCS[0], 0, 0)
    assert parsed.outcome == "change"
    assert (parsed.source_format, parsed.connector, parsed.op) == ("debezium", "postgresql", "c")
    assert (parsed.source_db, parsed.source_table, parsed.row_key) == ("postgres", "public.customers", '{"id":1}')
    assert json.loads(parsed.after or "") == {
        "id": 1,
        "first_name": "Anne",
        "last_name": "Kretchmar",
        "email": "annek@noanswer.org",
    }
    assert parsed.changed_columns == ("id", "first_name", "last_name", "email")
    assert parsed.source_lsn == 24023128
    assert parsed.source_snapshot == "true"


def test_postgres_update_with_key_only_before_has_unknown_changed_columns() -> None:
    parsed = parse_record(KEY, POSTGRES_DOCS[1], 0, 1)
    assert parsed.op == "u"
    assert parsed.before == '{"id":1}'
    assert parsed.changed_columns is None


def test_postgres_delete_with_key_only_before_image() -> None:
    parsed = parse_record(KEY, POSTGRES_DOCS[2], 0, 2)
    assert (parsed.op, parsed.after, parsed.row_key) == ("d", None, '{"id":1}')


def test_postgres_truncate_has_no_key() -> None:
    parsed = parse_record(None, POSTGRES_DOCS[3], 0, 3)
    assert (parsed.outcome, parsed.op, parsed.row_key, parsed.source_table) == ("change", "t", None, "public.customers")


@pytest.mark.parametrize("line", POSTGRES_DOCS[4:6])
def test_logical_decoding_messages_are_ignored(line: str) -> None:
    parsed = parse_record(None, line, 0, 4)
    assert (parsed.outcome, parsed.ignore_class) == ("ignored", "logical_decoding_message")


def test_db2_update_knows_its_changed_columns_and_orders_by_commit_then_change_lsn() -> None:
    created, updated, deleted = (parse_record(KEY, line, 0, index) for index, line in enumerate(DB2_DOCS))
    assert (updated.source_table, updated.changed_columns) == ("MYSCHEMA.CUSTOMERS", ("EMAIL",))
    assert created.position is not None and updated.position is not None and deleted.position is not None
    assert created.position < updated.position < deleted.position


def test_position_compares_lsns_as_numbers_not_text() -> None:
    source = {"connector": "postgresql", "table": "items"}
    small = parse_record(KEY, envelope("u", after={"id": 1}, source={**source, "lsn": 9}), 0, 0)
    big = parse_record(KEY, envelope("u", after={"id": 1}, source={**source, "lsn": 10}), 0, 1)
    assert small.position == sort_key("s", (9,))
    assert (small.position or "") < (big.position or "")


def test_connector_without_known_position_falls_back_to_kafka_position() -> None:
    mysql = {"connector": "mysql", "db": "shop", "table": "items", "ts_ms": 5}
    parsed = parse_record(KEY, envelope("c", after={"id": 1}, source=mysql), 3, 17)
    assert parsed.position == kafka_sort_key(3, 17)
    assert parsed.source_table == "shop.items"
    vitess = {"connector": "vitess", "keyspace": "shop", "table": "items", "vgtid": "[]"}
    assert parse_record(KEY, envelope("c", after={"id": 1}, source=vitess), 3, 18).position == kafka_sort_key(3, 18)


MYSQL_SOURCE = {"connector": "mysql", "db": "shop", "table": "items", "server_id": 223344, "file": "mysql-bin.000003"}
SQLSERVER_SOURCE = {"connector": "sqlserver", "db": "shop", "schema": "dbo", "table": "items"}
ORACLE_SOURCE = {
    "connector": "oracle",
    "db": "ORCLPDB1",
    "schema": "SHOP",
    "table": "ITEMS",
    "txId": "05000c00b9020000",
}

# Each connector's events of one row in source order: a snapshot read where the connector marks one,
# then changes whose positions differ in each number of the position and in its width.
EVENTS_IN_SOURCE_ORDER: dict[str, list[tuple[str, dict[str, object]]]] = {
    "mysql": [
        ("r", {**MYSQL_SOURCE, "snapshot": "true", "pos": 157, "row": 0}),
        ("u", {**MYSQL_SOURCE, "snapshot": "false", "pos": 157, "row": 0}),
        ("u", {**MYSQL_SOURCE, "snapshot": "false", "pos": 1442, "row": 1}),
        ("u", {**MYSQL_SOURCE, "file": "mysql-bin.000009", "pos": 98765, "row": 0}),
        ("u", {**MYSQL_SOURCE, "file": "mysql-bin.000010", "pos": 4, "row": 0}),
        ("d", {**MYSQL_SOURCE, "file": "mysql-bin.000010", "pos": 400, "row": 0}),
    ],
    "mariadb": [
        ("r", {**MYSQL_SOURCE, "connector": "mariadb", "file": "mariadb-bin.000099", "pos": 9, "snapshot": "first"}),
        ("u", {**MYSQL_SOURCE, "connector": "mariadb", "file": "mariadb-bin.000099", "pos": 10, "row": 0}),
        ("u", {**MYSQL_SOURCE, "connector": "mariadb", "file": "mariadb-bin.000100", "pos": 4, "row": 0}),
    ],
    "sqlserver": [
        ("r", {**SQLSERVER_SOURCE, "snapshot": "true", "commit_lsn": "00000027:00000758:0003"}),
        ("u", {**SQLSERVER_SOURCE, "commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:00000750:0002"}),
        ("u", {**SQLSERVER_SOURCE, "commit_lsn": "00000027:000009ff:0001", "change_lsn": "00000027:000009f0:0002"}),
        ("d", {**SQLSERVER_SOURCE, "commit_lsn": "00000028:00000010:0001", "change_lsn": "00000028:00000008:0004"}),
        (
            "c",
            {
                **SQLSERVER_SOURCE,
                "commit_lsn": "00000028:00000010:0001",
                "change_lsn": "00000028:00000008:0004",
                "event_serial_no": 2,
            },
        ),
    ],
    "oracle": [
        ("r", {**ORACLE_SOURCE, "snapshot": "true", "scn": "9223372036854775806", "commit_scn": None}),
        (
            "u",
            {**ORACLE_SOURCE, "scn": "9223372036854775800", "commit_scn": "9223372036854775808", "rs_id": "0x1.2.10"},
        ),
        (
            "u",
            {**ORACLE_SOURCE, "scn": "9223372036854775800", "commit_scn": "9223372036854775808", "rs_id": "0x1.3.10"},
        ),
        (
            "u",
            {**ORACLE_SOURCE, "scn": "18446744073709551617", "commit_scn": "18446744073709551618", "rs_id": "0x1.4.10"},
        ),
        ("d", {**ORACLE_SOURCE, "scn": "100000000000000000000", "commit_scn": "100000000000000000001", "ssn": 0}),
    ],
}


@pytest.mark.parametrize("connector", list(EVENTS_IN_SOURCE_ORDER))
def test_events_landed_at_reversed_offsets_keep_their_source_order(connector: str) -> None:
    """A late or re-delivered event has a higher offset than the events after it at the source."""
    events = EVENTS_IN_SOURCE_ORDER[connector]
    parsed = [
        parse_record(
            KEY, envelope(op, after=None if op == "d" else {"id": 1}, before={"id": 1}, source=source), 0, offset
        )
        for op, source, offset in zip(
            [op for op, _ in events], [source for _, source in events], range(len(events), 0, -1), strict=True
        )
    ]
    assert [record.outcome for record in parsed] == ["change"] * len(events)
    positions = [record.position or "" for record in parsed]
    assert all(position.startswith("s:") for position in positions)
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def test_mysql_binlog_position_is_the_same_whichever_offset_delivers_it() -> None:
    """A connector restart sends an event again at a new offset: the same position, one event."""
    source = {**MYSQL_SOURCE, "pos": 1442, "row": 1}
    first, again = (parse_record(KEY, envelope("u", after={"id": 1}, source=source), 0, offset) for offset in (5, 900))
    assert first.position == again.position == sort_key("s", (3, 1442, 1, 1))


def test_snapshot_flag_accepts_booleans_and_strings() -> None:
    for snapshot, expected in [(True, "true"), (False, "false"), ("last", "last"), ("incremental", "incremental")]:
        source = {"connector": "postgresql", "schema": "s", "table": "t", "lsn": 1, "snapshot": snapshot}
        assert parse_record(KEY, envelope("r", after={"id": 1}, source=source), 0, 0).source_snapshot == expected


def test_transaction_block_is_carried() -> None:
    transaction = {"id": "571:53195832", "total_order": 2, "data_collection_order": 1}
    parsed = parse_record(KEY, envelope("c", after={"id": 1}, transaction=transaction), 0, 0)
    assert (parsed.transaction_id, parsed.transaction_total_order, parsed.transaction_data_collection_order) == (
        "571:53195832",
        2,
        1,
    )


def test_toast_placeholder_is_reported_as_unavailable_and_not_changed() -> None:
    before = {"id": 1, "note": "old", "qty": 1}
    after = {"id": 1, "note": "__debezium_unavailable_value", "qty": 2}
    parsed = parse_record(KEY, envelope("u", before=before, after=after), 0, 0)
    assert parsed.unavailable_columns == ("note",)
    assert parsed.changed_columns == ("qty",)


def test_tombstone_is_ignored_with_its_key() -> None:
    parsed = parse_record(KEY, None, 0, 9)
    assert (parsed.outcome, parsed.ignore_class, parsed.row_key) == ("ignored", "tombstone", '{"id":1}')


def test_transaction_marker_is_ignored() -> None:
    marker = '{"status":"BEGIN","id":"571","event_count":null,"data_collections":null,"ts_ms":1}'
    parsed = parse_record(None, marker, 0, 0)
    assert (parsed.outcome, parsed.ignore_class) == ("ignored", "transaction_marker")


def test_key_is_canonical_whatever_its_spacing_and_order() -> None:
    key = '{ "b": 2,  "a": "x" }'
    assert parse_record(key, envelope("c", after={"a": "x", "b": 2}), 0, 0).row_key == '{"a":"x","b":2}'


@pytest.mark.parametrize(
    ("key", "payload", "reason"),
    [
        (KEY, "{not json", "invalid_json"),
        (KEY, "[1, 2]", "not_an_envelope"),
        (KEY, '{"hello": "world"}', "not_an_envelope"),
        (KEY, envelope("x"), "unknown_op"),
        (KEY, json.dumps({"op": "c", "after": {"id": 1}}), "invalid_envelope"),
        (KEY, envelope("c"), "invalid_envelope"),
        (KEY, envelope("u", after="not an object"), "invalid_envelope"),
        (None, envelope("c", after={"id": 1}), "missing_key"),
        ("plain-text-key", envelope("c", after={"id": 1}), "missing_key"),
        ("{}", envelope("d", before={"id": 1}), "missing_key"),
    ],
)
def test_bad_records_get_a_reason_and_never_raise(key: str | None, payload: str, reason: str) -> None:
    parsed = parse_record(key, payload, 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", reason)
    assert parsed.detail


def test_value_that_does_not_decode_is_quarantined() -> None:
    schema = {
        "type": "struct",
        "fields": [
            {
                "type": "struct",
                "field": "after",
                "fields": [{"type": "int32", "name": "io.debezium.time.Date", "field": "born"}],
            },
        ],
    }
    payload = json.dumps({"schema": schema, "payload": json.loads(envelope("c", after={"born": "yesterday"}))})
    parsed = parse_record(KEY, payload, 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", "invalid_value")
    assert "born" in (parsed.detail or "")


def decimal_field(name: str, scale: int, precision: int) -> dict[str, object]:
    parameters = {"scale": str(scale), "connect.decimal.precision": str(precision)}
    return {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": parameters, "field": name}


def numeric_decimal_message(after: str) -> str:
    """A MySQL create as JsonConverter writes it with decimal.format=NUMERIC: its schema declares
    Decimals, its payload holds them as JSON numbers. `after` is JSON text, so no float touches it."""
    row = {"type": "struct", "fields": [{"type": "int32", "field": "id"}, decimal_field("amount", 3, 40)]}
    schema = {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"}]}
    source = '{"connector":"mysql","db":"shop","table":"ledger","ts_ms":1000}'
    payload = f'{{"before":null,"after":{after},"source":{source},"op":"c","ts_ms":1005}}'
    return f'{{"schema":{json.dumps(schema, separators=(",", ":"))},"payload":{payload}}}'


def test_decimal_written_as_a_json_number_is_the_exact_string_with_its_scale() -> None:
    payload = numeric_decimal_message('{"id":1,"amount":123456789876543212345678987654321.110}')
    parsed = parse_record('{"id":1}', payload, 0, 0)
    assert parsed.outcome == "change"
    assert parsed.after == '{"id":1,"amount":"123456789876543212345678987654321.110"}'


def test_decimal_json_number_is_padded_to_its_scale_and_never_rounded() -> None:
    padded = parse_record('{"id":1}', numeric_decimal_message('{"id":1,"amount":-12345.1}'), 0, 0)
    assert padded.after == '{"id":1,"amount":"-12345.100"}'
    too_precise = parse_record('{"id":1}', numeric_decimal_message('{"id":1,"amount":12345.1234}'), 0, 0)
    assert (too_precise.outcome, too_precise.reason) == ("quarantine", "invalid_value")
    assert "amount" in (too_precise.detail or "")


def test_decimal_key_written_as_a_json_number_keeps_its_digits() -> None:
    key_schema = {"type": "struct", "fields": [decimal_field("id", 0, 40)]}
    key = f'{{"schema":{json.dumps(key_schema)},"payload":{{"id":1234567898765432123456789876543212345678}}}}'
    parsed = parse_record(key, envelope("c", after={"id": 1}), 0, 0)
    assert parsed.row_key == '{"id":"1234567898765432123456789876543212345678"}'


def test_schemaless_numbers_keep_the_digits_the_source_wrote() -> None:
    """Without a schema a number is written back as read: an integer of any width as an integer, a
    fraction a double holds as that double, any other fraction as a string of its digits."""
    after = (
        '{"id":1,"amount":123456789876543212345678987654321.110,"tiny":0.1000000000000000055511151231257827,'
        '"big":98765432109876543210987654321,"weight":3.14,"ratio":0.30000000000000004}'
    )
    payload = envelope("c", after={}).replace('"after": {}', f'"after": {after}')
    parsed = parse_record('{"id":1}', payload, 0, 0)
    assert parsed.after == (
        '{"id":1,"amount":"123456789876543212345678987654321.110","tiny":"0.1000000000000000055511151231257827",'
        '"big":98765432109876543210987654321,"weight":3.14,"ratio":0.30000000000000004}'
    )


def test_an_update_of_the_last_digits_of_a_long_decimal_is_a_change() -> None:
    before = '{"id":1,"amount":123456789876543212345678987654321.110}'
    after = '{"id":1,"amount":123456789876543212345678987654321.111}'
    payload = envelope("u", before={}, after={}).replace('"before": {}', f'"before": {before}')
    parsed = parse_record('{"id":1}', payload.replace('"after": {}', f'"after": {after}'), 0, 0)
    assert parsed.changed_columns == ("amount",)
