import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.corpus import corpus_lines
from udfs.events import ParsedRecord
from udfs.extended_json import unwrap
from udfs.mongodb import is_mongodb_envelope, oplog_patch, parse_mongodb
from udfs.positions import sort_key
from udfs.records import parse_record
from udfs.row_images import KeyEvent, resolve_rows

ZEROMICRO = ("zeromicro-cds-debezium-mongodb-1x",)
PAIMON = ("paimon-debezium-mongodb",)
RISINGWAVE = ("risingwave-debezium",)
MONGODB_DOCS = corpus_lines("debezium-docs", "mongodb-examples.jsonl")
OID = "5eb626b3452cd570b405bf7d"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ISO_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def kafka_pairs(name: str) -> list[tuple[str, str]]:
    """Paimon's event files: after the license comment, lines starting "{" alternate key, value."""
    lines = [line for line in corpus_lines(*PAIMON, name) if line.startswith("{")]
    return list(zip(lines[::2], lines[1::2], strict=True))


def replay(records: list[ParsedRecord]) -> list[dict[str, Any] | None]:
    events = [KeyEvent(record.op or "", record.after, record.unavailable_columns, record.patch) for record in records]
    return [json.loads(row) if row else None for row in resolve_rows(events)]


def event(op: str, **fields: Any) -> str:
    source = {"connector": "mongodb", "db": "shop", "collection": "orders", "ts_ms": 1000, "ord": 1}
    body: dict[str, Any] = {"op": op, "source": source, "ts_ms": 1005}
    body.update(fields)
    return json.dumps(body)


KEY = json.dumps({"id": json.dumps({"$oid": OID})})


# --- zeromicro/cds: Debezium 1.1.1 (oplog) create, two $set patches, delete ---------------------


def zeromicro_versions() -> list[dict[str, str]]:
    """The derived version table of expected.txt: `version|valid_from_ts_ms|...|thedate` rows."""
    lines = corpus_lines(*ZEROMICRO, "expected.txt")
    header_index = next(index for index, line in enumerate(lines) if line.startswith("# version|"))
    header = lines[header_index].removeprefix("# ").split("|")
    rows = [line.split("|") for line in lines[header_index + 1 :] if not line.startswith("#")]
    return [dict(zip(header, row, strict=True)) for row in rows]


def cell(value: Any) -> str:
    return "null" if value is None else str(value)


def test_zeromicro_sequence_replays_to_the_expected_document_versions() -> None:
    records = [
        parse_record(None, line, 0, index)
        for index, line in enumerate(corpus_lines(*ZEROMICRO, "debezium-mongodb-1.1.1-sequence.jsonl"))
    ]
    assert [record.op for record in records] == ["c", "u", "u", "d"]
    assert {record.row_key for record in records} == {json.dumps({"_id": OID}, separators=(",", ":"))}
    assert {record.source_table for record in records} == {"inventory.inventory"}
    positions = [record.position or "" for record in records]
    assert positions == sorted(positions)

    rows = replay(records)
    versions = zeromicro_versions()
    assert len(versions) == 3
    for index, version in enumerate(versions):
        row = rows[index]
        assert row is not None
        assert str(records[index].source_ts_ms) == version["valid_from_ts_ms"]
        assert str(records[index + 1].source_ts_ms) == version["valid_to_ts_ms"]
        columns = [name for name in version if name not in ("version", "valid_from_ts_ms", "valid_to_ts_ms")]
        assert {name: cell(row.get(name)) for name in columns} == {name: version[name] for name in columns}
        assert set(row) <= set(columns)
    assert rows[3] is None  # deleted: no current row


def test_zeromicro_patch_events_carry_only_what_they_set_as_cds_asserts() -> None:
    lines = corpus_lines(*ZEROMICRO, "debezium-mongodb-1.1.1-sequence.jsonl")
    update = parse_record(None, lines[2], 0, 2)
    assert update.after is None
    assert json.loads(update.patch or "") == {
        "set": {"b": 45.0, "c": 2444.0, "thedate": "2018-08-10T02:35:58.652Z"},
        "unset": [],
        "truncate": {},
    }
    assert update.changed_columns == ("b", "c", "thedate")
    deleted = parse_record(None, lines[3], 0, 3)
    assert (deleted.before, deleted.after, deleted.patch, deleted.row_key) == (None, None, None, f'{{"_id":"{OID}"}}')


# --- Apache Paimon: Debezium 2.7 events, before/after as Extended JSON text ----------------------


def paimon_image(name: str) -> dict[str, str]:
    """BEFORE_IMAGE / AFTER_IMAGE / KEY_ONLY of expected.txt: `{field=value, ...}`, values as text."""
    line = next(line for line in corpus_lines(*PAIMON, "expected.txt") if line.startswith(f"#   {name} "))
    body = line.split("=", 1)[1].strip().removeprefix("{").removesuffix("}")
    return dict(re.findall(r"(\w+)=(\[[^\]]*\]|[^,]+)", body))


def paimon_text(document: dict[str, Any]) -> dict[str, str]:
    """Our document as Paimon prints it: dates as epoch milliseconds (ours are ISO-8601), arrays as JSON."""

    def text(value: Any) -> str:
        if isinstance(value, list):
            return json.dumps(value)
        if isinstance(value, str) and ISO_DATE.fullmatch(value):
            return str((datetime.fromisoformat(value) - EPOCH) // timedelta(milliseconds=1))
        return str(value)

    return {name: text(value) for name, value in document.items()}


PAIMON_CASES = [
    # file, pair index, op, before image, after image (expected.txt's table)
    ("event-insert.txt", 0, "c", None, "BEFORE_IMAGE"),
    ("event-update.txt", 0, "u", None, "AFTER_IMAGE"),
    ("event-update.txt", 1, "u", "BEFORE_IMAGE", "AFTER_IMAGE"),
    ("event-delete.txt", 0, "d", None, None),
    ("event-delete.txt", 1, "d", None, None),
    ("event-delete.txt", 2, "d", "BEFORE_IMAGE", None),
]


@pytest.mark.parametrize(("name", "pair", "op", "before", "after"), PAIMON_CASES)
def test_paimon_events_parse_into_the_documents_paimon_expects(
    name: str, pair: int, op: str, before: str | None, after: str | None
) -> None:
    key, value = kafka_pairs(name)[pair]
    parsed = parse_record(key, value, 0, 0)
    assert (parsed.op, parsed.connector, parsed.source_db, parsed.source_table) == (
        op,
        "mongodb",
        "bigdata_test",
        "bigdata_test.sync_test_table",
    )
    assert json.loads(parsed.row_key or "") == paimon_image("KEY_ONLY")
    for image, expected in ((parsed.before, before), (parsed.after, after)):
        assert (image is None) == (expected is None)
        if image is not None and expected is not None:
            assert paimon_text(json.loads(image)) == paimon_image(expected)


def test_key_as_oid_and_as_json_string_literal_give_the_same_row_key() -> None:
    (oid_key, value), (string_key, _) = kafka_pairs("event-delete.txt")[:2]
    assert "$oid" in oid_key and "$oid" not in string_key
    assert parse_record(oid_key, value, 0, 0).row_key == parse_record(string_key, value, 0, 1).row_key


# --- RisingWave: Debezium 2.1.4 snapshot reads, with and without the converter schema -------------


def risingwave_payloads() -> dict[int, dict[str, Any]]:
    rows = [
        line.split("|", 2) for line in corpus_lines(*RISINGWAVE, "expected.txt") if line.startswith("mongo_payload|")
    ]
    return {int(document_id): json.loads(payload) for _, document_id, payload in rows}


@pytest.mark.parametrize("name", ["debezium_mongo_json_customers.1", "debezium_mongo_json_customers_no_schema_field.1"])
def test_risingwave_snapshot_reads_parse_into_the_expected_documents(name: str) -> None:
    records = [parse_record(None, line, 0, index) for index, line in enumerate(corpus_lines(*RISINGWAVE, name))]
    expected = risingwave_payloads()
    assert [json.loads(record.row_key or "")["_id"] for record in records] == sorted(expected)
    for record in records:
        document = json.loads(record.after or "")
        assert document == unwrap(expected[document["_id"]])
        assert (record.op, record.source_table) == ("r", "inventory.customers")
    assert [record.source_snapshot for record in records] == ["true", "true", "true", "last"]
    strong = [
        line.split("|")[1:] for line in corpus_lines(*RISINGWAVE, "expected.txt") if line.startswith("mongo_strong|")
    ]
    columns = [
        [str(document[name]) for name in ("_id", "email", "first_name", "last_name")]
        for document in (json.loads(record.after or "") for record in records)
    ]
    assert columns == strong


# --- Debezium documentation examples ------------------------------------------------------------


def test_docs_create_update_delete_parse() -> None:
    created, updated, deleted = (parse_record(None, line, 0, index) for index, line in enumerate(MONGODB_DOCS))
    assert {record.row_key for record in (created, updated, deleted)} == {'{"_id":1004}'}
    assert json.loads(created.after or "")["first_name"] == "Anne"
    assert created.changed_columns == ("_id", "first_name", "last_name", "email")
    assert json.loads(updated.before or "")["first_name"] == "unknown"
    assert json.loads(updated.after or "")["first_name"] == "Anne Marie"
    assert (updated.changed_columns, updated.patch) == (("first_name",), None)  # after is whole: no patch
    assert (deleted.op, deleted.after, json.loads(deleted.before or "")["_id"]) == ("d", None, 1004)
    assert updated.position == sort_key("s", (1558965508000, 1))


def test_1x_delete_with_only_a_filter_takes_its_key_from_the_filter() -> None:
    # The shape of the 1.x delete example of the Debezium MongoDB documentation.
    parsed = parse_record(None, event("d", filter='{"_id" : {"$numberLong" : "1004"}}'), 0, 0)
    assert (parsed.op, parsed.row_key, parsed.before, parsed.after) == ("d", '{"_id":1004}', None, None)


# --- Updates: 1.x patches and 2.x update descriptions -------------------------------------------


def test_2x_update_description_without_after_becomes_a_patch_applied_to_the_previous_document() -> None:
    created = parse_record(
        KEY,
        event("c", after=json.dumps({"_id": {"$oid": OID}, "a": {"b": 1, "c": 2}, "tags": [1, 2, 3, 4], "gone": 1})),
        0,
        0,
    )
    description = {
        "updatedFields": json.dumps({"a.b": {"$numberLong": "5"}, "tags.1": "two", "new": {"$date": 0}}),
        "removedFields": ["gone", "a.c"],
        "truncatedArrays": [{"field": "tags", "size": 2}],
    }
    updated = parse_record(KEY, event("u", after=None, updateDescription=description), 0, 1)
    assert updated.after is None
    assert json.loads(updated.patch or "") == {
        "set": {"a.b": 5, "tags.1": "two", "new": "1970-01-01T00:00:00.000Z"},
        "unset": ["gone", "a.c"],
        "truncate": {"tags": 2},
    }
    assert updated.changed_columns == ("a", "tags", "new", "gone")
    assert replay([created, updated])[1] == {
        "_id": OID,
        "a": {"b": 5},
        "tags": [1, "two"],
        "new": "1970-01-01T00:00:00.000Z",
    }


def test_update_description_fields_may_arrive_as_json_text_or_as_values() -> None:
    as_text = {"updatedFields": '{"x": 1}', "removedFields": '["y"]', "truncatedArrays": None}
    as_values = {"updatedFields": {"x": 1}, "removedFields": ["y"], "truncatedArrays": []}
    patches = [
        parse_record(KEY, event("u", updateDescription=description), 0, 0).patch for description in (as_text, as_values)
    ]
    assert patches[0] == patches[1] == '{"set":{"x":1},"unset":["y"],"truncate":{}}'


def test_2x_update_with_after_takes_the_whole_document() -> None:
    description = {"updatedFields": '{"a": 2}', "removedFields": None, "truncatedArrays": None}
    parsed = parse_record(
        KEY, event("u", after=json.dumps({"_id": {"$oid": OID}, "a": 2}), updateDescription=description), 0, 0
    )
    assert (parsed.after, parsed.patch, parsed.changed_columns) == (f'{{"_id":"{OID}","a":2}}', None, ("a",))


def test_1x_unset_of_dotted_paths() -> None:
    patch = json.dumps({"$v": 1, "$set": {"a.b.c": 1}, "$unset": {"x.y": True, "z": ""}})
    parsed = parse_record(None, event("u", patch=patch, filter=json.dumps({"_id": 7})), 0, 0)
    assert json.loads(parsed.patch or "") == {"set": {"a.b.c": 1}, "unset": ["x.y", "z"], "truncate": {}}
    assert parsed.row_key == '{"_id":7}'


def test_1x_replacement_patch_is_the_whole_new_document() -> None:
    patch = json.dumps({"_id": 7, "name": "replaced", "qty": {"$numberInt": "3"}})
    parsed = parse_record(None, event("u", patch=patch, filter='{"_id": 7}'), 0, 0)
    assert (parsed.after, parsed.patch) == ('{"_id":7,"name":"replaced","qty":3}', None)


def test_oplog_v2_diff_is_normalised() -> None:
    entry = {
        "$v": 2,
        "diff": {
            "u": {"name": "x"},
            "i": {"added": 1},
            "d": {"old": False},
            "saddress": {"u": {"city": "Lyon"}, "d": {"zip": False}},
            "stags": {"a": True, "l": 2, "u1": "b", "s0": {"u": {"k": 1}}},
        },
    }
    assert oplog_patch(entry) == {
        "set": {"name": "x", "added": 1, "address.city": "Lyon", "tags.1": "b", "tags.0.k": 1},
        "unset": ["old", "address.zip"],
        "truncate": {"tags": 2},
    }


# --- Keys ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "row_key"),
    [
        (json.dumps({"id": '{"$oid": "ab12"}'}), '{"_id":"ab12"}'),
        (json.dumps({"id": '"ab12"'}), '{"_id":"ab12"}'),
        (json.dumps({"id": "1004"}), '{"_id":1004}'),
        (json.dumps({"id": '{"$numberLong": "1004"}'}), '{"_id":1004}'),
        (json.dumps({"id": "not json"}), '{"_id":"not json"}'),
        (json.dumps({"id": '{"b": 2, "a": {"$oid": "ff"}}'}), '{"_id":{"a":"ff","b":2}}'),
        (
            json.dumps(
                {
                    "schema": {"type": "struct", "fields": [{"type": "string", "optional": False, "field": "id"}]},
                    "payload": {"id": '{"$oid": "ab12"}'},
                }
            ),
            '{"_id":"ab12"}',
        ),
    ],
)
def test_kafka_key_forms_unwrap_to_the_canonical_id_key(key: str, row_key: str) -> None:
    assert parse_record(key, event("d"), 0, 0).row_key == row_key


def test_row_key_from_the_key_equals_the_one_from_the_document() -> None:
    from_document = parse_record(None, event("c", after=json.dumps({"_id": {"$oid": OID}})), 0, 0)
    from_key = parse_record(KEY, event("d"), 0, 1)
    assert from_document.row_key == from_key.row_key == f'{{"_id":"{OID}"}}'


def test_position_is_ts_ms_then_ord_compared_as_numbers() -> None:
    def at(ts_ms: int, order: int) -> str:
        source = {"connector": "mongodb", "db": "d", "collection": "c", "ts_ms": ts_ms, "ord": order}
        return parse_record(KEY, event("d", source=source), 0, 0).position or ""

    assert at(1000, 9) < at(1000, 10) < at(1001, 1)


def test_detection_needs_the_mongodb_connector() -> None:
    assert is_mongodb_envelope({"op": "c"}, {"connector": "mongodb"})
    assert not is_mongodb_envelope({"op": "c"}, {"connector": "postgresql"})
    assert not is_mongodb_envelope({"op": "c"}, None)


def test_parse_mongodb_directly_takes_the_same_arguments_as_the_envelope_parser() -> None:
    body = json.loads(event("r", after='{"_id": 1}'))
    assert parse_mongodb(body, None, None, 0, 0).row_key == '{"_id":1}'


@pytest.mark.parametrize(
    ("key", "payload", "reason"),
    [
        (KEY, event("c", after="{not json"), "invalid_json"),
        (KEY, event("c", after="[1, 2]"), "invalid_envelope"),
        (KEY, event("c", after='{"$oid": "ab"}'), "invalid_envelope"),
        (KEY, event("c", after=5), "invalid_envelope"),
        (KEY, event("c"), "invalid_envelope"),
        (KEY, event("u"), "invalid_envelope"),
        (KEY, event("u", patch='{"$inc": {"a": 1}}'), "invalid_envelope"),
        (KEY, event("u", updateDescription={"updatedFields": "[1]"}), "invalid_envelope"),
        (KEY, event("u", updateDescription={"removedFields": "x"}), "invalid_json"),
        (KEY, event("u", updateDescription={"truncatedArrays": [{"field": "a", "size": -1}]}), "invalid_envelope"),
        (KEY, event("c", after='{"_id": {"$numberLong": "x"}}'), "invalid_value"),
        (KEY, event("x", after='{"_id": 1}'), "unknown_op"),
        (None, event("d"), "missing_key"),
        ('{"id": null}', event("d"), "missing_key"),
    ],
)
def test_bad_mongodb_events_get_a_reason_and_never_raise(key: str | None, payload: str, reason: str) -> None:
    parsed = parse_record(key, payload, 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", reason)
    assert parsed.detail
