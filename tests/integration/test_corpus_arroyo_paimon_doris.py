"""Three Debezium corpora of ../shared/corpus in one dbt build, each folder's expected results the oracle.

- arroyo-debezium-pg: 830 Debezium PostgreSQL 2.3 events of testdb's public.orders (no converter
  schema, REPLICA IDENTITY FULL, 56 no-op updates) that Arroyo's smoke test debezium_pass_through
  reads; its golden output, merged by primary key as Arroyo's harness merges it, is the final state.
- paimon-debezium-mysql: a Debezium MySQL 1.9 snapshot read of a 79-column table of every MySQL
  type, with the converter schema and decimals written as JSON numbers of up to 40 digits
  (expected-alltype.txt); and four creates of four tables of one database on one topic, which
  Paimon routes to a table each by `source.table` (expected-include.txt).
- doris-kafka-connector-debezium: a Debezium MySQL 1.9 create of a 51-column table (decimals as
  base64 bytes, expected-full_types.txt) and a Debezium PostgreSQL 2.7 create of temporal types
  (expected-time_example.txt), from the Doris Kafka connector's end-to-end tests.

A build costs tens of seconds, so every file lands in one landing folder, each as one kcat file on
a topic of its own (the include file's four tables share the one topic their test wrote them to),
and one build reads them all, other modules' files too (conftest.py's combined_build; each
module reads its own topics' rows). No two files share a source identity (source_db,
source_table), so no renaming is needed.

None of the files carries Kafka keys (the authors' loaders produce values only). Debezium keys each
change of a table with a primary key by that key, and a relational row change without a JSON-object
key is `missing_key` here (docs/message-formats.md), so each record gets the key Debezium would
write: the table's primary key from the row image, with its key schema where the value carries the
converter schema, without it where the value has none.

The expected-*.txt files of Paimon and Doris give per column the value the output contract
requires (docs/message-formats.md) and what the peer prints where that differs (Doris prints zoned
values in its UTC+08:00 session and TINYINT(1) as BOOLEAN; Paimon drops a zone and prints dates as
day counts): the test asserts the former, by the column's kind, and explains the differences
beside the checks.
"""

import json
import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal
from itertools import pairwise
from typing import Any

import pytest

from tests.corpus import corpus_lines
from tests.integration.conftest import Build
from tests.integration.corpus_tables import CorpusTables, corpus_tables, document
from tests.kcat import KafkaRecord

ARROYO = "arroyo-debezium-pg"
PAIMON = "paimon-debezium-mysql"
DORIS = "doris-kafka-connector-debezium"

ARROYO_INPUT = "aggregate_updates.json"
ARROYO_GOLDEN = ("golden", "debezium_pass_through.json")
ARROYO_TOPIC = "arroyo.public.orders"
INCLUDE_FILE = "include-topic0-debezium-data-1.txt"
INCLUDE_TOPIC = "paimon.include.topic0"
MICROS_PER_SECOND = 1_000_000


# --- reading the corpus ---------------------------------------------------------------------------


def json_lines(folder: str, *name: str) -> list[str]:
    """The JSON lines of a corpus file (Paimon's files start with a license comment)."""
    return [line for line in corpus_lines(folder, *name) if line.startswith("{")]


def envelope(message: dict[str, Any]) -> dict[str, Any]:
    """The envelope of a message with or without the converter's `{"schema", "payload"}` wrapper."""
    body: dict[str, Any] = message.get("payload", message) if message.keys() <= {"schema", "payload"} else message
    return body


def after_field_schemas(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The converter schema's field schemas of the `after` image, by column."""
    (after,) = [field for field in message["schema"]["fields"] if field["field"] == "after"]
    return {field["field"]: field for field in after["fields"]}


def debezium_key(message: dict[str, Any], columns: tuple[str, ...]) -> str:
    """The Kafka key Debezium writes for the row of `message`: its key columns, with the key schema
    (the columns' own field schemas) when the value carries the converter schema."""
    body = envelope(message)
    image = body["after"] or body["before"]
    payload = {column: image[column] for column in columns}
    if "schema" not in message:
        return json.dumps(payload)
    fields = after_field_schemas(message)
    source = body["source"]
    schema = {
        "type": "struct",
        "fields": [{**fields[column], "optional": False} for column in columns],
        "optional": False,
        "name": f"{source['name']}.{source.get('schema') or source['db']}.{source['table']}.Key",
    }
    return json.dumps({"schema": schema, "payload": payload})


@dataclass(frozen=True)
class TypedTable:
    """A one-event table whose every column's expected value is given in an expected-*.txt file."""

    folder: str
    message_file: str
    expected_file: str
    topic: str
    key: tuple[str, ...]

    def message(self) -> dict[str, Any]:
        (line,) = json_lines(self.folder, self.message_file)
        return dict(json.loads(line))

    def identity(self) -> tuple[str, str]:
        """(source_db, source_table): `<schema>.<table>`, `<db>.<table>` for MySQL (no schemas)."""
        source = envelope(self.message())["source"]
        return source["db"], f"{source.get('schema') or source['db']}.{source['table']}"


TYPED_TABLES = (
    # The table's primary key is (_id) (Paimon's sync_table_setup.sql, SOURCE.txt).
    TypedTable(PAIMON, "alltype-debezium-data-1.txt", "expected-alltype.txt", "paimon.alltype", ("_id",)),
    TypedTable(DORIS, "full_types.json", "expected-full_types.txt", "doris.full_types", ("id",)),
    TypedTable(DORIS, "time_example.json", "expected-time_example.txt", "doris.time_example", ("id",)),
)


@dataclass(frozen=True)
class ExpectedValue:
    """One line `column|kind|value the output contract requires|what the peer prints (when different)`."""

    table: TypedTable
    column: str
    kind: str
    value: str
    peer_prints: str


def expected_values(table: TypedTable) -> list[ExpectedValue]:
    values = []
    for line in corpus_lines(table.folder, table.expected_file):
        if not line.startswith("#"):
            column, kind, value, *peer = line.split("|", 3)
            values.append(ExpectedValue(table, column, kind, value, peer[0] if peer else ""))
    return values


def all_expected_values() -> list[ExpectedValue]:
    return [value for table in TYPED_TABLES for value in expected_values(table)]


def include_expected() -> list[list[str]]:
    """expected-include.txt: `table|id|name|description|weight`."""
    return [line.split("|") for line in corpus_lines(PAIMON, "expected-include.txt") if not line.startswith("#")]


def arroyo_lines() -> list[str]:
    return corpus_lines(ARROYO, ARROYO_INPUT)


def arroyo_events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in arroyo_lines()]


def canonical_key(image: dict[str, Any], columns: tuple[str, ...]) -> str:
    """The output's row_key: the key columns as JSON, keys sorted, no spaces."""
    return json.dumps({column: image[column] for column in columns}, sort_keys=True, separators=(",", ":"))


def arroyo_golden_state() -> dict[int, dict[str, Any]]:
    """Arroyo's golden output merged as its harness does (smoke_tests.rs, merge_debezium): a `c`
    inserts the after row, a `u` removes the before key and inserts the after row, a `d` removes the
    before key."""
    state: dict[int, dict[str, Any]] = {}
    for line in corpus_lines(ARROYO, *ARROYO_GOLDEN):
        event = json.loads(line)
        if event["op"] in ("u", "d"):
            state.pop(event["before"]["id"], None)
        if event["op"] in ("c", "u"):
            state[event["after"]["id"]] = event["after"]
    return state


# --- the landing ----------------------------------------------------------------------------------


def landing_files() -> dict[str, list[KafkaRecord]]:
    """Every landed record, by kcat file name."""
    files: dict[str, list[KafkaRecord]] = {}
    files["arroyo-orders.json"] = [
        KafkaRecord(ARROYO_TOPIC, 0, offset, debezium_key(json.loads(line), ("id",)), line)
        for offset, line in enumerate(arroyo_lines())
    ]
    for table in TYPED_TABLES:
        files[f"{table.topic}.json"] = [
            KafkaRecord(
                table.topic,
                0,
                0,
                debezium_key(table.message(), table.key),
                json_lines(table.folder, table.message_file)[0],
            )
        ]
    files["paimon-include-topic0.json"] = [
        KafkaRecord(INCLUDE_TOPIC, 0, offset, debezium_key(json.loads(line), ("id",)), line)
        for offset, line in enumerate(json_lines(PAIMON, INCLUDE_FILE))
    ]
    return files


def all_records() -> list[KafkaRecord]:
    return [record for records in landing_files().values() for record in records]


# --- the build and its tables ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tables(combined_build: Build) -> CorpusTables:
    return corpus_tables(combined_build, {record.topic for record in all_records()})


# --- every folder: nothing lost -------------------------------------------------------------------


def test_every_landed_record_is_a_change(tables: CorpusTables) -> None:
    records = all_records()
    assert sorted((row["topic"], row["offset"], row["outcome"]) for row in tables.parsed) == sorted(
        (record.topic, record.offset, "change") for record in records
    )
    assert sorted((row["topic"], row["offset"]) for row in tables.changes) == sorted(
        (record.topic, record.offset) for record in records
    )
    assert tables.quarantine == []


# --- arroyo-debezium-pg ---------------------------------------------------------------------------


def test_arroyo_changes_are_the_events_as_they_are(tables: CorpusTables) -> None:
    events = arroyo_events()
    changes = tables.changes_of(ARROYO_TOPIC)
    assert len(changes) == len(events) == 830
    for change, event in zip(changes, events, strict=True):
        assert (
            change["op"],
            change["connector"],
            change["source_db"],
            change["source_table"],
            change["row_key"],
            change["source_ts_ms"],
            change["source_snapshot"],
        ) == (
            event["op"],
            "postgresql",
            "testdb",
            "public.orders",
            canonical_key(event["after"] or event["before"], ("id",)),
            event["source"]["ts_ms"],
            "false",
        ), change["offset"]
        # No converter schema: values pass through as the event has them (docs/message-formats.md),
        # order_date included, the integer microseconds nothing marks as a timestamp.
        assert (document(change["before"]), document(change["after"])) == (event["before"], event["after"])
        # REPLICA IDENTITY FULL: an update's before image is whole, so what changed is known
        # (nothing, for the 56 no-op updates); a create sets every column.
        if event["op"] == "c":
            assert change["changed_columns"] == list(event["after"])
        if event["op"] == "u":
            before, after = event["before"], event["after"]
            assert change["changed_columns"] == [name for name in after if after[name] != before[name]]
    assert sum(1 for change in changes if change["op"] == "u" and change["changed_columns"] == []) == 56


def test_arroyo_current_state_is_arroyo_s_merged_golden_output(tables: CorpusTables) -> None:
    current = tables.current_of("testdb", "public.orders")
    ours = {json.loads(row["row_key"])["id"]: json.loads(row["row"]) for row in current}
    golden = arroyo_golden_state()
    assert len(golden) == 559
    # Arroyo's golden output renders order_date (a MicroTimestamp) as epoch seconds, its TIMESTAMP
    # type; the events carry no schema, so ours is the microseconds the event wrote (asserted below
    # against the events). Compared at Arroyo's precision, the states are equal.
    assert {
        row_id: {**row, "order_date": row["order_date"] // MICROS_PER_SECOND} for row_id, row in ours.items()
    } == golden
    # Each live row is its last event's after image, dated by that event (events in LSN order).
    last_events = {(event["after"] or event["before"])["id"]: event for event in arroyo_events()}
    assert ours == {row_id: event["after"] for row_id, event in last_events.items() if event["op"] != "d"}
    for row in current:
        event = last_events[json.loads(row["row_key"])["id"]]
        assert (row["op"], row["source_ts_ms"]) == (event["op"], event["source"]["ts_ms"])


def test_arroyo_history_has_a_version_per_create_and_update(tables: CorpusTables) -> None:
    """Not a peer assertion (Arroyo keeps no history): the SCD2 versions the project's semantics give for the
    input, derived in LSN order (the file's order; source.ts_ms increases with it): every c and u
    starts a version, no-op updates included; the next u ends it with `u`, a d with `d`."""
    events = arroyo_events()
    assert all(a["source"]["lsn"] < b["source"]["lsn"] for a, b in pairwise(events))
    by_id: dict[int, list[dict[str, Any]]] = {}
    for event in events:
        by_id.setdefault((event["after"] or event["before"])["id"], []).append(event)
    expected = []
    for row_id, key_events in by_id.items():
        version = 0
        for event, following in zip(key_events, [*key_events[1:], None], strict=True):
            if event["op"] == "d":
                continue
            version += 1
            ended_by = None if following is None else ("d" if following["op"] == "d" else "u")
            expected.append(
                (
                    canonical_key({"id": row_id}, ("id",)),
                    version,
                    event["after"],
                    event["source"]["ts_ms"],
                    None if following is None else following["source"]["ts_ms"],
                    ended_by,
                    following is None,
                )
            )
    history = tables.history_of("testdb", "public.orders")
    assert len(history) == 582 + 225
    assert [
        (
            row["row_key"],
            row["version"],
            json.loads(row["row"]),
            row["valid_from_ms"],
            row["valid_to_ms"],
            row["ended_by"],
            row["is_current"],
        )
        for row in history
    ] == sorted(expected, key=lambda version: (version[0], version[1]))


# --- paimon-debezium-mysql and doris-kafka-connector-debezium: one typed row each -----------------


def single_row(tables: CorpusTables, table: TypedTable) -> dict[str, Any]:
    (row,) = tables.current_of(*table.identity())
    return dict(json.loads(row["row"]))


def as_utc(moment: datetime) -> datetime:
    """An instant; a timestamp without zone is read as UTC (expected-*.txt: "compared as UTC")."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def assert_typed_value(ours: Any, expected: ExpectedValue, field_schema: dict[str, Any]) -> None:
    """Our row JSON value against the expected file's value, by its kind (the files' header)."""
    value = expected.value
    match expected.kind:
        case "int":
            assert type(ours) is int and ours == int(value)
        case "bool":
            assert type(ours) is bool and ours == (value == "true")
        case "str":
            assert ours == value
        case "float":
            assert type(ours) in (int, float) and math.isclose(ours, float(value), rel_tol=1e-6)
        case "dec":
            # Exact, as a string (never a binary float), with the scale of its Decimal schema
            # (the output contract). Paimon prints _fixed with two fraction digits (…321.11); the schema's
            # scale is 3, so ours is …321.110: the same number, compared as one.
            assert isinstance(ours, str) and Decimal(ours) == Decimal(value)
            if field_schema.get("name") == "org.apache.kafka.connect.data.Decimal":
                assert Decimal(ours).as_tuple().exponent == -int(field_schema["parameters"]["scale"])
        case "date":
            # Paimon prints a day count (19439), the output contract fixes YYYY-MM-DD.
            assert ours == value
        case "ts":
            assert isinstance(ours, str) and as_utc(datetime.fromisoformat(ours)) == as_utc(
                datetime.fromisoformat(value)
            )
        case "tstz":
            # The instant Debezium wrote: Doris shows it in its UTC+08:00 session, Paimon without
            # its zone; ours keeps the ISO-8601 text with its "Z".
            moment = datetime.fromisoformat(ours)
            assert moment.tzinfo is not None and as_utc(moment) == as_utc(datetime.fromisoformat(value))
        case "time":
            # The output contract does not fix a time of day's form: text, or the raw microseconds (Paimon
            # prints milliseconds of the day, 36803000).
            if isinstance(ours, int):
                expected_time = time.fromisoformat(value)
                seconds = expected_time.hour * 3600 + expected_time.minute * 60 + expected_time.second
                assert ours == seconds * MICROS_PER_SECOND + expected_time.microsecond
            else:
                assert time.fromisoformat(ours) == time.fromisoformat(value)
        case "ztime":
            # A time with zone, compared at UTC (Doris shows it at UTC+08:00).
            day = date(2000, 1, 1)
            ours_time, expected_time = time.fromisoformat(ours), time.fromisoformat(value)
            assert ours_time.tzinfo is not None
            assert as_utc(datetime.combine(day, ours_time)) == as_utc(datetime.combine(day, expected_time))
        case "json":
            # io.debezium.data.Json: the JSON text Debezium wrote, or its parsed value.
            assert (json.loads(ours) if isinstance(ours, str) else ours) == json.loads(value)
        case "optint":
            # MicroDuration: The output contract does not fix its form; a number must be the microseconds.
            assert (type(ours) is int and ours == int(value)) or (isinstance(ours, str) and ours != "")
        case "skip":
            # Bytes, bits and geometries: the output contract says nothing of their form; the column is kept.
            assert ours is not None
        case _:
            raise AssertionError(f"unknown kind {expected.kind!r} in {expected.table.expected_file}")


@pytest.mark.parametrize(
    "expected", all_expected_values(), ids=lambda expected: f"{expected.table.topic}.{expected.column}"
)
def test_typed_column_holds_the_value_spec_requires(tables: CorpusTables, expected: ExpectedValue) -> None:
    row = single_row(tables, expected.table)
    assert expected.column in row
    field_schema = after_field_schemas(expected.table.message())[expected.column]
    assert_typed_value(row[expected.column], expected, field_schema)


@pytest.mark.parametrize("table", TYPED_TABLES, ids=lambda table: table.topic)
def test_typed_table_is_its_one_event(tables: CorpusTables, table: TypedTable) -> None:
    message = table.message()
    body = envelope(message)
    source_db, source_table = table.identity()
    (change,) = tables.changes_of(table.topic)
    row_key = canonical_key(body["after"], table.key)
    assert (change["op"], change["connector"], change["source_db"], change["source_table"], change["row_key"]) == (
        body["op"],
        body["source"]["connector"],
        source_db,
        source_table,
        row_key,
    )
    assert change["before"] is None
    assert change["source_ts_ms"] == body["source"]["ts_ms"]
    # Every column of the after image is in the row, and the expected file names each of them.
    row = single_row(tables, table)
    assert [expected.column for expected in expected_values(table)] == list(body["after"])
    assert sorted(row) == sorted(body["after"])
    assert document(change["after"]) == row
    assert change["changed_columns"] == list(body["after"])
    (current,) = tables.current_of(source_db, source_table)
    assert (current["row_key"], current["op"], current["source_ts_ms"]) == (row_key, body["op"], change["source_ts_ms"])
    (version,) = tables.history_of(source_db, source_table)
    assert (version["version"], document(version["row"]), version["valid_from_ms"]) == (
        1,
        row,
        change["source_ts_ms"],
    )
    assert (version["valid_to_ms"], version["ended_by"], version["is_current"]) == (None, None, True)


def test_doris_tinyint1_and_boolean_stay_the_integers_debezium_sent(tables: CorpusTables) -> None:
    # Doris prints TINYINT(1)/BOOLEAN as true: its target columns are BOOLEAN. Debezium MySQL sends
    # them as int16 1, and the output contract has no such coercion; only BIT(1) arrives as a boolean.
    (full_types,) = [table for table in TYPED_TABLES if table.topic == "doris.full_types"]
    row = single_row(tables, full_types)
    assert (row["tiny1_c"], row["boolean_c"], row["bit1_c"]) == (1, 1, False)
    assert type(row["tiny1_c"]) is int and type(row["bit1_c"]) is bool


# --- paimon-debezium-mysql: one topic, four tables ------------------------------------------------


def test_paimon_one_topic_gives_a_table_per_source_table(tables: CorpusTables) -> None:
    lines = json_lines(PAIMON, INCLUDE_FILE)
    changes = tables.changes_of(INCLUDE_TOPIC)
    assert [(row["offset"], row["op"], row["source_db"], row["source_table"]) for row in changes] == [
        (offset, "c", "test", f"test.{json.loads(line)['source']['table']}") for offset, line in enumerate(lines)
    ]
    # Paimon's test shows only flink, paimon_1 and paimon_2: it filters tables with
    # includingTables="flink|paimon.+", an option this project does not have, so "ignore" is a table
    # here too (expected-include.txt lists it).
    current = [row for row in tables.current if row["source_db"] == "test"]
    assert len(current) == len(lines)
    assert {
        row["source_table"]: (json.loads(row["row_key"]), json.loads(row["row"]), row["topic"]) for row in current
    } == {
        f"test.{table}": (
            {"id": int(row_id)},
            {"id": int(row_id), "name": name, "description": description, "weight": float(weight)},
            INCLUDE_TOPIC,
        )
        for table, row_id, name, description, weight in include_expected()
    }
    assert {table for table, *_ in include_expected()} == {"paimon_1", "paimon_2", "ignore", "flink"}
