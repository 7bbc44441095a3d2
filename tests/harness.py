"""A seeded, reproducible randomized harness for the build's order, duplicate and batching properties.

Three parts, all pure Python and deterministic per seed:

1. `generate_scenario`: a Debezium PostgreSQL change stream of one database (schema-less
   envelopes) with many keys in two tables: a snapshot (`op: r`, `source.snapshot` first/true/last),
   then transactions of creates, updates, deletes (each followed by its tombstone), primary-key
   changes (delete of the old key, create of the new one), re-inserts of deleted keys, incremental
   snapshot reads and truncates. Every event has a strictly increasing `source.lsn` (crossing a
   power of ten, so positions compared as text break) and a `source.ts_ms` that grows with it.
   Records sit on several Kafka partitions by a hash of their key; a truncate (null key) sits on
   any partition.
2. `oracle`: the final state and the SCD2 history that docs/ordering-and-history.md implies for
   a set of events, written from those rules alone (no udfs/, no SQL).
3. Transformations of a landing that must change nothing: a random permutation into files,
   duplicates in other files, re-delivery at new offsets (a connector restart) and late arrival
   in batches (older source positions landing after newer ones).
"""

import itertools
import json
import random
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.kcat import KafkaRecord, write_kcat_file

Row = dict[str, Any]
RowId = tuple[str, str, str]
"""`(source_db, source_table, row_key)`: a row's identity."""
RecordId = tuple[str, int, int]
"""`(topic, partition, offset)`: a Kafka record's identity."""
Position = tuple[int, ...]
EventId = tuple[str, str, str | None, Position, str]
"""What makes two deliveries the same event: table, key, source position and op."""

PG_SCHEMA = "public"
DEBEZIUM_VERSION = "2.5.4.Final"
_STREAM_START_MS = 1_710_000_000_000

# --------------------------------------------------------------------------------------------
# Events and their Kafka records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One Debezium PostgreSQL change event (`t`: a truncate, with no key)."""

    source_db: str
    source_table: str
    """`<schema>.<table>`, as `source_table` names it."""
    op: str
    key: str | None
    """The Kafka key text, columns in primary-key order as Debezium writes them."""
    before: Row | None
    after: Row | None
    lsn: int
    last_commit_lsn: int
    ts_ms: int
    """`source.ts_ms`: the commit time, shared by the events of one transaction."""
    tx_id: int
    snapshot: str

    @property
    def row_key(self) -> str | None:
        return None if self.key is None else canonical_key(json.loads(self.key))

    @property
    def row_id(self) -> RowId:
        if self.row_key is None:
            raise ValueError("a truncate has no row key")
        return (self.source_db, self.source_table, self.row_key)

    @property
    def position(self) -> Position:
        """The PostgreSQL source position: `lsn`, then the numbers of `sequence`."""
        return (self.lsn, self.last_commit_lsn, self.lsn)

    @property
    def topic(self) -> str:
        return f"{self.source_db}.{self.source_table}"

    @property
    def identity(self) -> EventId:
        return (self.source_db, self.source_table, self.row_key, self.position, self.op)


def canonical_key(key: dict[str, Any]) -> str:
    """`row_key`: keys sorted, no spaces."""
    return json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def envelope(event: Event, envelope_ts_ms: int) -> str:
    """The schema-less Debezium envelope of `event` (`envelope_ts_ms`: when the connector saw it)."""
    schema, table = event.source_table.split(".", 1)
    source = {
        "version": DEBEZIUM_VERSION,
        "connector": "postgresql",
        "name": event.source_db,
        "ts_ms": event.ts_ms,
        "snapshot": event.snapshot,
        "db": event.source_db,
        "sequence": _compact([str(event.last_commit_lsn), str(event.lsn)]),
        "schema": schema,
        "table": table,
        "txId": event.tx_id,
        "lsn": event.lsn,
        "xmin": None,
    }
    body = {
        "before": event.before,
        "after": event.after,
        "source": source,
        "op": event.op,
        "ts_ms": envelope_ts_ms,
        "transaction": None,
    }
    return _compact(body)


def decode_event(record: KafkaRecord) -> Event | None:
    """The event a record of this harness carries; None for a tombstone."""
    if record.payload is None:
        return None
    body = json.loads(record.payload)
    source = body["source"]
    last_commit, lsn = (int(number) for number in json.loads(source["sequence"]))
    if lsn != source["lsn"]:
        raise ValueError(f"sequence and lsn disagree in {record}")
    return Event(
        source_db=source["db"],
        source_table=f"{source['schema']}.{source['table']}",
        op=body["op"],
        key=record.key,
        before=body["before"],
        after=body["after"],
        lsn=lsn,
        last_commit_lsn=last_commit,
        ts_ms=source["ts_ms"],
        tx_id=source["txId"],
        snapshot=source["snapshot"],
    )


def decode_events(records: Iterable[KafkaRecord]) -> list[Event]:
    """Every event the records carry, duplicates included, tombstones left out."""
    return [event for event in map(decode_event, records) if event is not None]


def record_id(record: KafkaRecord) -> RecordId:
    return (record.topic, record.partition, record.offset)


def key_partition(key: str, partitions: int) -> int:
    """Like Kafka's keyed partitioner: a stable hash of the key's bytes."""
    return zlib.crc32(key.encode()) % partitions


# --------------------------------------------------------------------------------------------
# The simulated database and its stream
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableSpec:
    name: str
    key_columns: tuple[str, ...]
    full_identity: bool
    """REPLICA IDENTITY FULL: updates and deletes carry the whole old row as `before`; otherwise
    (DEFAULT) updates have no `before` and deletes only the key columns."""

    @property
    def qualified(self) -> str:
        return f"{PG_SCHEMA}.{self.name}"


ACCOUNTS = TableSpec("accounts", ("id",), full_identity=True)
LINE_ITEMS = TableSpec("line_items", ("order_id", "line_no"), full_identity=False)
TABLES = (ACCOUNTS, LINE_ITEMS)

# Quotes, a backslash and non-ASCII text must survive the double JSON encoding of kcat lines.
_OWNERS = ("Ann", "Zoë", "O'Brien", 'Ed "Fast" Eddie', "Søren", "Chen", "Back\\slash", "Amara")
_STATUSES = ("open", "frozen", "closed")
_NOTES = (None, "vip", "café ☕", "line1\nline2", "")

_OPERATION_WEIGHTS = (
    ("create", 28),
    ("update", 45),
    ("delete", 10),
    ("pk_change", 5),
    ("reinsert", 6),
    ("snapshot_read", 6),
)


@dataclass(frozen=True)
class Scenario:
    """One database's stream: its events in source order and the Kafka records carrying them."""

    source_db: str
    seed: int
    partitions: int
    events: tuple[Event, ...]
    records: tuple[KafkaRecord, ...]
    """Per topic and partition in offset order: each event, and a tombstone after each delete."""
    live_rows: dict[RowId, Row]
    """The simulated database's rows at the end: a check of the oracle's final state."""


class _Simulation:
    """The database: live rows per table, deleted rows to re-insert, positions and clocks."""

    def __init__(self, source_db: str, rng: random.Random) -> None:
        self.source_db = source_db
        self.rng = rng
        self.live: dict[str, dict[str, Row]] = {table.name: {} for table in TABLES}
        self.dead: dict[str, dict[str, Row]] = {table.name: {} for table in TABLES}
        self.next_number = {table.name: 1 for table in TABLES}
        # Just below 10**8: the lsn gains a digit mid-stream.
        self.lsn = 10**8 - rng.randint(20_000, 60_000)
        self.last_commit_lsn = self.lsn
        self.ts_ms = _STREAM_START_MS + rng.randint(0, 10**7)
        self.tx_id = rng.randint(500, 5000)
        self.events: list[Event] = []

    # -- rows --------------------------------------------------------------------------------

    def key_of(self, table: TableSpec, row: Row) -> str:
        return _compact({column: row[column] for column in table.key_columns})

    def new_key(self, table: TableSpec) -> Row:
        number = self.next_number[table.name]
        self.next_number[table.name] += 1
        if table is ACCOUNTS:
            return {"id": number}
        return {"order_id": 500 + number // 3, "line_no": number % 3 + 1}

    def values(self, table: TableSpec) -> Row:
        rng = self.rng
        if table is ACCOUNTS:
            return {
                "owner": rng.choice(_OWNERS),
                "balance": rng.randint(-500, 10**6),
                "status": rng.choice(_STATUSES),
                "note": rng.choice(_NOTES),
            }
        return {"sku": f"SKU-{rng.randint(1, 999):03d}", "quantity": rng.randint(1, 20), "comment": rng.choice(_NOTES)}

    def changed(self, table: TableSpec, row: Row) -> Row:
        """The row with one or two of its non-key columns changed."""
        new_values = self.values(table)
        columns = self.rng.sample(sorted(new_values), self.rng.randint(1, 2))
        return {**row, **{column: new_values[column] for column in columns}}

    def key_image(self, table: TableSpec, row: Row) -> Row:
        """REPLICA IDENTITY DEFAULT's old tuple: the key columns, the rest null."""
        return {column: (value if column in table.key_columns else None) for column, value in row.items()}

    # -- events ------------------------------------------------------------------------------

    def emit(
        self, table: TableSpec, op: str, key: str | None, before: Row | None, after: Row | None, snapshot: str = "false"
    ) -> None:
        self.lsn += self.rng.randint(8, 400)
        self.events.append(
            Event(
                self.source_db, table.qualified, op, key, before, after,
                self.lsn, self.last_commit_lsn, self.ts_ms, self.tx_id, snapshot,
            )
        )  # fmt: skip

    def snapshot(self, rows: int) -> None:
        """The initial snapshot: `r` events, `source.snapshot` first, true, ..., last."""
        self.tx_id += 1
        for index in range(rows):
            table = ACCOUNTS if self.rng.random() < 0.5 else LINE_ITEMS
            row = {**self.new_key(table), **self.values(table)}
            key = self.key_of(table, row)
            self.live[table.name][key] = row
            self.ts_ms += self.rng.randint(0, 1)
            marker = "first" if index == 0 else "last" if index == rows - 1 else "true"
            self.emit(table, "r", key, None, row, marker)

    def commit(self) -> None:
        """Close a transaction: its events share `ts_ms`; the next one starts later."""
        self.last_commit_lsn = self.lsn + self.rng.randint(1, 50)
        self.lsn = self.last_commit_lsn
        self.ts_ms += self.rng.randint(5, 2000)
        self.tx_id += self.rng.randint(1, 3)

    def pick_live(self, touched: set[tuple[str, str]]) -> tuple[TableSpec, str] | None:
        for table in self.rng.sample(TABLES, len(TABLES)):
            keys = [key for key in self.live[table.name] if (table.name, key) not in touched]
            if keys:
                return table, self.rng.choice(sorted(keys))
        return None

    def operation(self, kind: str, touched: set[tuple[str, str]]) -> None:
        """One operation of a transaction; falls back to a create when it has no row to work on."""
        rng = self.rng
        target = self.pick_live(touched) if kind not in ("create", "reinsert") else None
        if kind == "reinsert":
            candidates = [
                (table, key)
                for table in TABLES
                for key in sorted(self.dead[table.name])
                if (table.name, key) not in touched
            ]
            if candidates:
                table, key = rng.choice(candidates)
                row = {**self.dead[table.name].pop(key), **self.values(table)}
                self.live[table.name][key] = row
                self.emit(table, "c", key, None, row)
                touched.add((table.name, key))
                return
        if target is None:
            table = ACCOUNTS if rng.random() < 0.5 else LINE_ITEMS
            row = {**self.new_key(table), **self.values(table)}
            key = self.key_of(table, row)
            self.live[table.name][key] = row
            self.emit(table, "c", key, None, row)
            touched.add((table.name, key))
            return
        table, key = target
        row = self.live[table.name][key]
        touched.add((table.name, key))
        if kind == "update":
            new_row = self.changed(table, row)
            self.live[table.name][key] = new_row
            self.emit(table, "u", key, row if table.full_identity else None, new_row)
        elif kind == "snapshot_read":
            self.emit(table, "r", key, None, row, "incremental")
        elif kind == "delete":
            self.delete(table, key)
        elif kind == "pk_change":
            self.delete(table, key)
            new_row = {**row, **self.new_key(table)}
            new_key = self.key_of(table, new_row)
            self.live[table.name][new_key] = new_row
            self.emit(table, "c", new_key, None, new_row)
            touched.add((table.name, new_key))

    def delete(self, table: TableSpec, key: str) -> None:
        row = self.live[table.name].pop(key)
        self.dead[table.name][key] = row
        self.emit(table, "d", key, row if table.full_identity else self.key_image(table, row), None)

    def truncate(self, table: TableSpec) -> None:
        self.dead[table.name].update(self.live[table.name])
        self.live[table.name].clear()
        self.emit(table, "t", None, None, None)
        self.commit()


def generate_scenario(
    source_db: str, seed: int, *, events: int = 400, partitions: int = 3, truncates: int = 2
) -> Scenario:
    """About `events` change events (a primary-key change may add one) of database `source_db`.

    A fifth of the events are the snapshot; the truncates are spread over the streaming part, each
    on a random table, followed by more changes to the same table.
    """
    if events < 20 or partitions < 2:
        raise ValueError("a scenario needs at least 20 events and 2 partitions")
    rng = random.Random(f"{source_db}:{seed}")
    simulation = _Simulation(source_db, rng)
    simulation.snapshot(max(4, events // 5))
    simulation.commit()
    streaming = events - len(simulation.events)
    truncate_at = sorted(len(simulation.events) + (streaming * (n + 1)) // (truncates + 1) for n in range(truncates))
    kinds, weights = zip(*_OPERATION_WEIGHTS, strict=True)
    while len(simulation.events) < events:
        if truncate_at and len(simulation.events) >= truncate_at[0]:
            truncate_at.pop(0)
            simulation.truncate(rng.choice(TABLES))
            continue
        touched: set[tuple[str, str]] = set()
        for _ in range(rng.randint(1, 3)):
            if len(simulation.events) >= events:
                break
            simulation.operation(rng.choices(kinds, weights)[0], touched)
        simulation.commit()
    live_rows = {
        (source_db, table.qualified, canonical_key(json.loads(key))): row
        for table in TABLES
        for key, row in simulation.live[table.name].items()
    }
    events_tuple = tuple(simulation.events)
    return Scenario(
        source_db, seed, partitions, events_tuple, tuple(kafka_records(events_tuple, partitions, rng)), live_rows
    )


def kafka_records(events: Sequence[Event], partitions: int, rng: random.Random) -> list[KafkaRecord]:
    """The records of events in source order: keyed ones on their key's partition, a truncate on a
    random one; a tombstone after each delete; offsets consecutive per topic and partition."""
    next_offset: dict[tuple[str, int], int] = defaultdict(int)
    records = []

    def append(event: Event, partition: int, payload: str | None, kafka_ts: int) -> None:
        offset = next_offset[event.topic, partition]
        next_offset[event.topic, partition] += 1
        records.append(KafkaRecord(event.topic, partition, offset, event.key, payload, kafka_ts))

    for event in events:
        partition = rng.randrange(partitions) if event.key is None else key_partition(event.key, partitions)
        envelope_ts = event.ts_ms + rng.randint(1, 30)
        append(event, partition, envelope(event, envelope_ts), envelope_ts + rng.randint(1, 5))
        if event.op == "d":
            append(event, partition, None, envelope_ts + 6)
    return records


# --------------------------------------------------------------------------------------------
# The oracle (docs/ordering-and-history.md)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """One `cdc_history` row of a key, its `version` number being its place in the key's list."""

    row: Row
    valid_from: int
    """Epoch milliseconds: the `source_ts` of the event that made the version."""
    valid_to: int | None
    ended_by: str | None

    @property
    def is_current(self) -> bool:
        return self.ended_by is None


@dataclass(frozen=True)
class Current:
    """One `cdc_current` row."""

    row: Row
    op: str
    source_ts: int


@dataclass(frozen=True)
class Oracle:
    current: dict[RowId, Current]
    history: dict[RowId, list[Version]]


def oracle(events: Iterable[Event]) -> Oracle:
    """The state and history the rules imply, whatever order and repetition `events` come in.

    - The same event delivered twice (same key, source position and op) counts once.
    - Events of a table apply in source position order (PostgreSQL: lsn, then sequence).
    - `c`, `r`, `u` set the row to `after`: the open version, if any, ends (`u`) and one starts.
    - `d` ends the key's open version (`d`, valid_to = the delete's source_ts).
    - `t` at position P ends every version of its table still open at P (`t`, valid_to = the
      truncate's source_ts): exactly the rows whose last event before P left them live.
    """
    unique = {event.identity: event for event in events}
    by_table: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for event in unique.values():
        by_table[event.source_db, event.source_table].append(event)
    result = Oracle({}, {})
    for table_events in by_table.values():
        _apply_table(sorted(table_events, key=lambda event: event.position), result)
    return result


def _apply_table(events: Sequence[Event], result: Oracle) -> None:
    """Apply one table's events, in source order, to `result`."""
    history = result.history
    opened: dict[RowId, str] = {}  # key → the op that made its open version (always its last one)

    def close(row_id: RowId, ts_ms: int, ended_by: str) -> None:
        del opened[row_id]
        history[row_id][-1] = replace(history[row_id][-1], valid_to=ts_ms, ended_by=ended_by)

    for event in events:
        if event.op == "t":
            for row_id in list(opened):
                close(row_id, event.ts_ms, "t")
            continue
        row_id = event.row_id
        if row_id in opened:
            close(row_id, event.ts_ms, "d" if event.op == "d" else "u")
        if event.op in ("c", "r", "u"):
            if event.after is None:
                raise ValueError(f"{event.op} without an after image: {event}")
            history.setdefault(row_id, []).append(Version(event.after, event.ts_ms, None, None))
            opened[row_id] = event.op
        elif event.op != "d":
            raise ValueError(f"not a row change: {event}")
    for row_id, op in opened.items():
        version = history[row_id][-1]
        result.current[row_id] = Current(version.row, op, version.valid_from)


def oracle_of_records(records: Iterable[KafkaRecord]) -> Oracle:
    return oracle(decode_events(records))


# --------------------------------------------------------------------------------------------
# Landing transformations (none may change the build's result)
# --------------------------------------------------------------------------------------------


def record_positions(records: Iterable[KafkaRecord]) -> dict[RecordId, Position]:
    """The source position of each record; a tombstone takes that of the record before it in its
    partition (its delete), so it sorts right after it."""
    records = sorted(records, key=record_id)
    positions: dict[RecordId, Position] = {}
    previous: KafkaRecord | None = None
    for record in records:
        event = decode_event(record)
        if event is not None:
            positions[record_id(record)] = event.position
        elif previous is not None and (previous.topic, previous.partition) == (record.topic, record.partition):
            positions[record_id(record)] = positions[record_id(previous)]
        else:
            raise ValueError(f"a tombstone without a record before it: {record}")
        previous = record
    return positions


def source_db_of(record: KafkaRecord) -> str:
    """The database a record's topic (`<db>.<schema>.<table>`) belongs to."""
    return record.topic.split(".", 1)[0]


def _deliveries_by_db(records: Iterable[KafkaRecord]) -> dict[str, list[tuple[KafkaRecord, ...]]]:
    """Per database, its events in source order, each with the tombstone after it, if any."""
    records = list(records)
    positions = record_positions(records)
    by_db: dict[str, list[tuple[KafkaRecord, ...]]] = defaultdict(list)
    for record in sorted(
        records, key=lambda record: (source_db_of(record), positions[record_id(record)], record.payload is None)
    ):
        stream = by_db[source_db_of(record)]
        if record.payload is None and stream and stream[-1][0].key == record.key:
            stream[-1] = (*stream[-1], record)
        else:
            stream.append((record,))
    return by_db


def split_into_files(records: Sequence[KafkaRecord], files: int, rng: random.Random) -> list[list[KafkaRecord]]:
    """The records in a random permutation, cut into `files` non-empty files of random sizes."""
    if not 1 <= files <= len(records):
        raise ValueError(f"cannot split {len(records)} records into {files} files")
    shuffled = list(records)
    rng.shuffle(shuffled)
    cuts = [0, *sorted(rng.sample(range(1, len(shuffled)), files - 1)), len(shuffled)]
    return [shuffled[start:end] for start, end in itertools.pairwise(cuts)]


def duplicate_into_other_files(
    files: Sequence[Sequence[KafkaRecord]], share: float, rng: random.Random
) -> list[list[KafkaRecord]]:
    """About `share` of the records landed a second time (same identity, same content), each in
    another file than its first copy, at a random place in it."""
    if len(files) < 2:
        raise ValueError("duplicates into other files need at least two files")
    result = [list(file) for file in files]
    for index, file in enumerate(files):
        for record in file:
            if rng.random() < share:
                target = rng.choice([other for other in range(len(files)) if other != index])
                result[target].insert(rng.randint(0, len(result[target])), record)
    return result


def redeliver(records: Sequence[KafkaRecord], restarts: int, window: int, rng: random.Random) -> list[KafkaRecord]:
    """Debezium's at-least-once delivery: after each of `restarts` connector restarts, a run of
    `window` consecutive events (in source order, per database) is published again at new offsets
    after the last ones of their partitions. Same events (key, source block, op, images), a new
    envelope `ts_ms` and Kafka timestamp; a delete brings its tombstone again; a truncate may land
    on another partition. Returns only the new records."""
    next_offset: dict[tuple[str, int], int] = defaultdict(int)
    partitions: dict[str, int] = defaultdict(int)
    for record in records:
        slot = (record.topic, record.partition)
        next_offset[slot] = max(next_offset[slot], record.offset + 1)
        partitions[record.topic] = max(partitions[record.topic], record.partition + 1)
    again: list[KafkaRecord] = []
    for stream in _deliveries_by_db(records).values():
        for _ in range(restarts):
            start = rng.randrange(max(1, len(stream) - window))
            delay_ms = rng.randint(60_000, 600_000)
            for delivery in stream[start : start + window]:
                # A truncate (no key) may go to any partition; a keyed record to its key's.
                partition = rng.randrange(partitions[delivery[0].topic]) if delivery[0].key is None else None
                for record in delivery:
                    payload = record.payload
                    if payload is not None:
                        body = json.loads(payload)
                        body["ts_ms"] += delay_ms
                        payload = _compact(body)
                    slot = (record.topic, record.partition if partition is None else partition)
                    offset = next_offset[slot]
                    next_offset[slot] += 1
                    again.append(
                        replace(
                            record, partition=slot[1], offset=offset, payload=payload, ts_ms=record.ts_ms + delay_ms
                        )
                    )
    return again


def arrival_batches(
    records: Sequence[KafkaRecord], batches: int, late_share: float, rng: random.Random
) -> list[list[KafkaRecord]]:
    """The records cut into `batches` by source position (batch b roughly holds the b-th slice of
    each database's stream), then some records held back to a later batch, arriving after newer
    ones: about `late_share` of all, half of the truncates, and half of the updates (creates,
    reads) directly followed by a delete of their key in the same batch, which then arrive after
    that delete."""
    positions = record_positions(records)
    ordered = sorted(records, key=lambda record: (source_db_of(record), positions[record_id(record)]))
    by_db: dict[str, list[KafkaRecord]] = defaultdict(list)
    for record in ordered:
        by_db[source_db_of(record)].append(record)
    batch_of: dict[RecordId, int] = {}
    for stream in by_db.values():
        for rank, record in enumerate(stream):
            batch_of[record_id(record)] = rank * batches // len(stream)

    def hold_back(record: KafkaRecord, after_batch: int) -> None:
        if after_batch < batches - 1:
            batch_of[record_id(record)] = rng.randint(after_batch + 1, batches - 1)

    last_event: dict[RowId, tuple[Event, KafkaRecord]] = {}
    for record in ordered:
        event = decode_event(record)
        if event is None:
            continue
        batch = batch_of[record_id(record)]
        if event.op == "t":
            if rng.random() < 0.5:
                hold_back(record, batch)
            continue
        previous = last_event.get(event.row_id)
        last_event[event.row_id] = (event, record)
        if event.op == "d" and previous is not None and previous[0].op != "d":
            previous_record = previous[1]
            if batch_of[record_id(previous_record)] == batch and rng.random() < 0.5:
                hold_back(previous_record, batch)
    for record in ordered:
        if rng.random() < late_share:
            hold_back(record, batch_of[record_id(record)])
    result: list[list[KafkaRecord]] = [[] for _ in range(batches)]
    for record in records:
        result[batch_of[record_id(record)]].append(record)
    return result


def first_arrivals(batches: Sequence[Iterable[KafkaRecord]]) -> list[tuple[Event, int]]:
    """Each event once (whatever delivery), in source order, with the first batch it arrives in."""
    first: dict[EventId, tuple[Event, int]] = {}
    for index, batch in enumerate(batches):
        for event in decode_events(batch):
            first.setdefault(event.identity, (event, index))
    return sorted(first.values(), key=lambda arrival: arrival[0].position)


def late_updates_before_deletes(batches: Sequence[Iterable[KafkaRecord]]) -> set[RowId]:
    """Keys whose delete arrives in an earlier batch than the change (c, r, u) right before it:
    until that change arrives, the key's history lacks a version."""
    per_key: dict[RowId, list[tuple[Event, int]]] = defaultdict(list)
    for event, batch in first_arrivals(batches):
        if event.key is not None:
            per_key[event.row_id].append((event, batch))
    return {
        row_id
        for row_id, arrivals in per_key.items()
        for (previous, previous_batch), (event, batch) in itertools.pairwise(arrivals)
        if event.op == "d" and previous.op != "d" and previous_batch > batch
    }


def late_truncates(batches: Sequence[Iterable[KafkaRecord]]) -> list[Event]:
    """Truncates arriving in a later batch than some event of their table after them."""
    arrivals = first_arrivals(batches)
    return [
        truncate
        for truncate, truncate_batch in arrivals
        if truncate.op == "t"
        and any(
            (event.source_db, event.source_table) == (truncate.source_db, truncate.source_table)
            and event.position > truncate.position
            and batch < truncate_batch
            for event, batch in arrivals
        )
    ]


def move_to_own_file(
    files: Sequence[Sequence[KafkaRecord]], moved: Callable[[KafkaRecord], bool], *, first: bool
) -> list[list[KafkaRecord]]:
    """The records `moved` selects taken out of their files into one file of their own, placed
    first (its name sorts before every other file's) or last."""
    kept = [[record for record in file if not moved(record)] for file in files]
    own = [record for file in files for record in file if moved(record)]
    return [own, *kept] if first else [*kept, own]


def is_truncate(record: KafkaRecord) -> bool:
    return record.key is None and record.payload is not None


def partitions_written_before(truncate: KafkaRecord, records: Iterable[KafkaRecord]) -> set[int]:
    """The partitions of the truncate's topic that hold events older than it."""
    event = decode_event(truncate)
    if event is None:
        raise ValueError(f"{truncate} is a tombstone, not a truncate")
    return {
        record.partition
        for record in records
        if record.topic == truncate.topic and (row := decode_event(record)) is not None and row.lsn < event.lsn
    }


def write_landing(directory: Path, files: Sequence[Sequence[KafkaRecord]]) -> list[Path]:
    """Each file as kcat lines, `part-000.jsonl`, `part-001.jsonl`, ...: names sort in list order."""
    return [write_kcat_file(directory / f"part-{index:03d}.jsonl", file) for index, file in enumerate(files)]
