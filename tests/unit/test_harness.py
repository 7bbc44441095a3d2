"""The randomized harness itself (tests/harness.py): its streams, its oracle and its landing
transformations, so that a failing build property points at the build, not at the harness."""

import itertools
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tests.harness import (
    ACCOUNTS,
    LINE_ITEMS,
    Current,
    Event,
    Scenario,
    Version,
    arrival_batches,
    decode_event,
    decode_events,
    duplicate_into_other_files,
    generate_scenario,
    is_truncate,
    kafka_records,
    key_partition,
    late_truncates,
    late_updates_before_deletes,
    move_to_own_file,
    oracle,
    oracle_of_records,
    partitions_written_before,
    record_id,
    record_positions,
    redeliver,
    split_into_files,
    write_landing,
)
from tests.kcat import KafkaRecord

SEEDS = (1, 2, 3, 42)


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return [generate_scenario(f"db_{seed}", seed, events=400, partitions=2 + seed % 3) for seed in SEEDS]


# --------------------------------------------------------------------------------------------
# Hand-checked oracle cases
# --------------------------------------------------------------------------------------------

_LSN = iter(range(1000, 10**6, 10))


def change(op: str, row_id: int | None, ts: int, table: str = "public.t", db: str = "db", **values: object) -> Event:
    """An event at the next lsn: `after` is {"id": row_id, **values} for c, r and u."""
    key = None if row_id is None else json.dumps({"id": row_id})
    after = {"id": row_id, **values} if op in ("c", "r", "u") else None
    lsn = next(_LSN)
    return Event(db, table, op, key, None, after, lsn, lsn - 5, ts, 1, "false")


def key(row_id: int, table: str = "public.t", db: str = "db") -> tuple[str, str, str]:
    return (db, table, f'{{"id":{row_id}}}')


def test_updates_and_deletes_end_versions_at_the_next_events_time() -> None:
    events = [
        change("r", 1, 100, v=0),
        change("u", 1, 200, v=1),
        change("u", 1, 300, v=2),
        change("d", 1, 400),
        change("c", 1, 500, v=3),  # the key comes back after its delete
    ]
    result = oracle(events)
    assert result.history[key(1)] == [
        Version({"id": 1, "v": 0}, 100, 200, "u"),
        Version({"id": 1, "v": 1}, 200, 300, "u"),
        Version({"id": 1, "v": 2}, 300, 400, "d"),
        Version({"id": 1, "v": 3}, 500, None, None),
    ]
    assert result.current == {key(1): Current({"id": 1, "v": 3}, "c", 500)}


def test_truncate_ends_rows_last_written_before_it_and_keeps_those_written_after() -> None:
    events = [
        change("c", 1, 100),
        change("c", 2, 110),
        change("d", 2, 120),  # already gone: the truncate does not touch it
        change("c", 3, 130),
        change("c", 9, 135, table="public.other"),  # another table
        change("c", 9, 136, db="other_db"),  # the same table in another database
        change("t", None, 140),
        change("c", 4, 150),  # written after the truncate
        change("c", 1, 160),  # re-created after the truncate
    ]
    result = oracle(events)
    assert result.history[key(1)] == [Version({"id": 1}, 100, 140, "t"), Version({"id": 1}, 160, None, None)]
    assert result.history[key(2)] == [Version({"id": 2}, 110, 120, "d")]
    assert result.history[key(3)] == [Version({"id": 3}, 130, 140, "t")]
    assert set(result.current) == {key(1), key(4), key(9, "public.other"), key(9, db="other_db")}


def test_primary_key_change_is_two_rows() -> None:
    events = [change("c", 1, 100, name="a"), change("d", 1, 200), change("c", 2, 200, name="a")]
    result = oracle(events)
    assert result.history[key(1)] == [Version({"id": 1, "name": "a"}, 100, 200, "d")]
    assert result.history[key(2)] == [Version({"id": 2, "name": "a"}, 200, None, None)]
    assert set(result.current) == {key(2)}


def test_order_is_the_source_position_and_a_late_update_does_not_resurrect() -> None:
    create, update, delete = change("c", 1, 100, v=0), change("u", 1, 200, v=1), change("d", 1, 300)
    in_order = oracle([create, update, delete])
    assert oracle([delete, update, create]) == in_order
    assert in_order.current == {}
    assert in_order.history[key(1)] == [
        Version({"id": 1, "v": 0}, 100, 200, "u"),
        Version({"id": 1, "v": 1}, 200, 300, "d"),
    ]
    # Without the update, the create's version lasts until the delete: the update re-cuts it.
    assert oracle([delete, create]).history[key(1)] == [Version({"id": 1, "v": 0}, 100, 300, "d")]


def test_a_truncate_is_ordered_by_position_not_by_time_of_arrival() -> None:
    before, truncate, after = change("c", 1, 100), change("t", None, 200), change("u", 1, 300, v=1)
    expected = [Version({"id": 1}, 100, 200, "t"), Version({"id": 1, "v": 1}, 300, None, None)]
    assert oracle([after, truncate, before]).history[key(1)] == expected


def test_the_same_event_twice_counts_once() -> None:
    events = [change("c", 1, 100), change("u", 1, 200, v=1), change("t", None, 300)]
    assert oracle(events + events[::-1]) == oracle(events)


def test_late_arrivals_are_recognised() -> None:
    create, update, delete = change("c", 1, 100), change("u", 1, 200, v=1), change("d", 1, 300)
    truncate, after_truncate = change("t", None, 400), change("c", 2, 500)
    records = kafka_records([create, update, delete, truncate, after_truncate], 2, random.Random(0))
    c, u, d, t, c2 = (record for record in records if record.payload is not None)  # in event order
    assert late_updates_before_deletes([[c, d], [u]]) == {key(1)}
    assert late_updates_before_deletes([[c, u], [d]]) == set()
    assert late_updates_before_deletes([[c, d, u, u]]) == set()
    assert late_truncates([[c, c2], [t]]) == [truncate]
    assert late_truncates([[c, t], [c2]]) == []


def test_oracle_final_state_is_the_simulated_database(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        assert {row_id: current.row for row_id, current in oracle(scenario.events).current.items()} == (
            scenario.live_rows
        )


# --------------------------------------------------------------------------------------------
# The generated streams
# --------------------------------------------------------------------------------------------


def test_same_seed_same_stream_other_seed_other_stream() -> None:
    first = generate_scenario("db", 5, events=200)
    assert generate_scenario("db", 5, events=200) == first
    assert generate_scenario("db", 6, events=200).records != first.records


def test_positions_and_times_increase(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        lsns = [event.lsn for event in scenario.events]
        assert lsns == sorted(set(lsns))
        assert lsns[0] < 10**8 <= lsns[-1], "the lsn gains a digit mid-stream"
        times = [event.ts_ms for event in scenario.events]
        assert times == sorted(times)
        per_key: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        for event in scenario.events:
            if event.key is not None:
                per_key[event.row_id].append(event.ts_ms)
        assert all(len(set(ts)) == len(ts) for ts in per_key.values()), "one event per key and transaction"


def test_streams_hold_every_kind_of_event(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        events = scenario.events
        assert {event.op for event in events} == {"r", "c", "u", "d", "t"}
        assert [event.snapshot for event in events[:2]] == ["first", "true"]
        assert "last" in {event.snapshot for event in events} and "incremental" in {e.snapshot for e in events}
        assert {event.source_table for event in events} == {ACCOUNTS.qualified, LINE_ITEMS.qualified}
        keys = {event.row_key for event in events if event.key is not None}
        assert len(keys) > 150
        by_tx: dict[int, list[Event]] = defaultdict(list)
        for event in events:
            by_tx[event.tx_id].append(event)
        pk_changes = [
            (old, new)
            for tx in by_tx.values()
            for old, new in itertools.pairwise(tx)
            if (old.op, new.op) == ("d", "c") and old.source_table == new.source_table and old.key != new.key
        ]
        # FULL replica identity (accounts): the delete's before image is the row that moved.
        assert any(
            old.before is not None and new.after is not None and old.before | {"id": new.after["id"]} == new.after
            for old, new in pk_changes
            if old.source_table == ACCOUNTS.qualified
        )
        assert pk_changes, "a primary-key change: delete of the old key and create of the new one"
        reinserted = [
            event
            for index, event in enumerate(events)
            if event.op == "c" and any(e.op == "d" and e.key == event.key for e in events[:index])
        ]
        assert reinserted, "a deleted key created again"
        # DEFAULT replica identity: deletes carry only the key, updates no before image.
        line_item_deletes = [e for e in events if e.op == "d" and e.source_table == LINE_ITEMS.qualified]
        assert all(e.before and e.before["sku"] is None and e.before["order_id"] for e in line_item_deletes)


def test_records_sit_on_partitions_like_kafka(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        records = scenario.records
        by_slot: dict[tuple[str, int], list[KafkaRecord]] = defaultdict(list)
        for record in records:
            by_slot[record.topic, record.partition].append(record)
        for slot_records in by_slot.values():
            assert [record.offset for record in slot_records] == list(range(len(slot_records)))
            for previous, record in itertools.pairwise(slot_records):
                if record.payload is None:  # a tombstone right after its delete, same key
                    event = decode_event(previous)
                    assert event is not None and event.op == "d" and previous.key == record.key
        assert len({record.partition for record in records}) == scenario.partitions
        for record in records:
            if record.key is not None:
                assert record.partition == key_partition(record.key, scenario.partitions)
        assert sum(record.payload is None for record in records) == sum(e.op == "d" for e in scenario.events)
        assert decode_events(records) == list(scenario.events)


def test_every_truncate_sits_apart_from_some_rows_it_ends(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        truncates = [record for record in scenario.records if is_truncate(record)]
        assert len(truncates) == 2
        for truncate in truncates:
            assert partitions_written_before(truncate, scenario.records) - {truncate.partition}


# --------------------------------------------------------------------------------------------
# Landing transformations
# --------------------------------------------------------------------------------------------


def all_records(scenarios: list[Scenario]) -> list[KafkaRecord]:
    return [record for scenario in scenarios for record in scenario.records]


def test_split_is_a_permutation_into_files(scenarios: list[Scenario]) -> None:
    records = all_records(scenarios)
    files = split_into_files(records, 7, random.Random(1))
    assert len(files) == 7 and all(files)
    flat = [record for file in files for record in file]
    assert Counter(flat) == Counter(records) and flat != records
    assert split_into_files(records, 7, random.Random(1)) == files


def test_duplicates_keep_identities_and_land_in_other_files(scenarios: list[Scenario]) -> None:
    records = all_records(scenarios)
    files = split_into_files(records, 5, random.Random(2))
    duplicated = duplicate_into_other_files(files, 0.1, random.Random(3))
    flat = [record for file in duplicated for record in file]
    copies = Counter(flat) - Counter(records)
    assert 0.05 * len(records) < sum(copies.values()) < 0.15 * len(records)
    assert set(flat) == set(records)
    assert len({record_id(record) for record in flat}) == len(records), "one content per identity"
    for record in copies:
        assert sum(record in file for file in duplicated) >= 2
    assert oracle_of_records(flat) == oracle_of_records(records)


def test_redelivery_repeats_events_at_new_offsets(scenarios: list[Scenario]) -> None:
    records = all_records(scenarios)
    again = redeliver(records, restarts=2, window=30, rng=random.Random(4))
    assert len(again) >= 2 * 30 * len(scenarios)
    assert not {record_id(record) for record in again} & {record_id(record) for record in records}
    highest: dict[tuple[str, int], int] = defaultdict(lambda: -1)
    for record in records:
        highest[record.topic, record.partition] = max(highest[record.topic, record.partition], record.offset)
    new_offsets: dict[tuple[str, int], list[int]] = defaultdict(list)
    for record in again:
        new_offsets[record.topic, record.partition].append(record.offset)
    for slot, offsets in new_offsets.items():
        assert offsets == list(range(highest[slot] + 1, highest[slot] + 1 + len(offsets)))
    originals = {event.identity: event for event in decode_events(records)}
    partition_of_key = {(record.topic, record.key): record.partition for record in records if record.key is not None}
    for record in again:
        event = decode_event(record)
        if event is None:
            continue
        assert originals[event.identity] == event, "the same event"
        if record.key is not None:
            assert record.partition == partition_of_key[record.topic, record.key]
    original_payloads = {record.payload for record in records}
    assert all(record.payload not in original_payloads for record in again if record.payload is not None)
    record_positions([*records, *again])  # every re-delivered tombstone follows its delete
    assert oracle_of_records([*records, *again]) == oracle_of_records(records)


def test_late_batches_hold_back_older_events(scenarios: list[Scenario]) -> None:
    records = all_records(scenarios)
    batches = arrival_batches(records, 3, 0.05, random.Random(5))
    assert Counter(record for batch in batches for record in batch) == Counter(records)
    positions = record_positions(records)
    for earlier, later in itertools.pairwise(batches):
        newest = max(positions[record_id(record)] for record in earlier)
        assert any(positions[record_id(record)] < newest for record in later), "late records"
    # Updates older than a delete that arrives before them, and truncates arriving after newer rows.
    assert len(late_updates_before_deletes(batches)) >= 10
    assert late_truncates(batches)


def test_truncates_move_to_a_file_of_their_own(scenarios: list[Scenario]) -> None:
    files = split_into_files(all_records(scenarios), 4, random.Random(6))
    for first in (True, False):
        moved = move_to_own_file(files, is_truncate, first=first)
        own = moved[0] if first else moved[-1]
        rest = moved[1:] if first else moved[:-1]
        assert own and all(is_truncate(record) for record in own)
        assert not any(is_truncate(record) for file in rest for record in file)
        assert Counter(r for file in moved for r in file) == Counter(r for file in files for r in file)


def test_landing_files_hold_the_records_as_kcat_lines(scenarios: list[Scenario], tmp_path: Path) -> None:
    files = split_into_files(scenarios[0].records, 3, random.Random(7))
    paths = write_landing(tmp_path, files)
    assert [path.name for path in paths] == ["part-000.jsonl", "part-001.jsonl", "part-002.jsonl"]
    for path, file in zip(paths, files, strict=True):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert [
            KafkaRecord(line["topic"], line["partition"], line["offset"], line["key"], line["payload"], line["ts"])
            for line in lines
        ] == file
