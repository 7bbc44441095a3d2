"""Sort keys that order events by their source position, compared as numbers.

A position is a tuple of non-negative integers (PostgreSQL `lsn` then `sequence`, Db2 commit and
change LSN segments, MySQL binlog coordinates, ...). Its sort key is text whose plain string order
is the numeric order of the tuple, so SQL can order, compare and deduplicate positions of any width
with one string column: each number is written as its digit count (two digits) followed by its
digits, numbers joined by `.` (which sorts before every digit, so a prefix sorts first).

Positions are only ever compared between events of one row (or one table, for a truncate), so
between events of one connector: each connector's tuple has its own shape.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from udfs import json_text
from udfs.reasons import RecordError

SOURCE_POSITION = "s"
"""Prefix of positions taken from the source database."""
KAFKA_POSITION = "k"
"""Prefix of the fallback position, Kafka (partition, offset), for sources that give none."""
MAX_DIGITS = 99
"""`sort_key` writes each number's digit count in two digits: a wider number is no position."""
_POSITION_LIMIT = 10**MAX_DIGITS
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")

SNAPSHOT_READ = 0
STREAMED = 1
"""Ranks of a snapshot read and of a streamed change at the same position: the snapshot read the
table as of that position, so it comes first (a blocking snapshot mid-stream stays in place, since
the rank only breaks ties)."""
SNAPSHOT_READ_FLAGS = frozenset({"true", "first", "first_in_data_collection", "last_in_data_collection", "last"})
"""`source.snapshot` of a snapshot read. `incremental` is not one: an incremental snapshot's reads
are interleaved with the stream and take their place in it by their own position."""
_ASCII_DIGITS = "0123456789"
_REDO_RECORD_ADDRESS_PARTS = 3


def sort_key(kind: str, numbers: Iterable[int]) -> str:
    """`sort_key("s", (34078720, 5))` → `s:0834078720.015`."""
    parts = []
    for number in numbers:
        if number < 0:
            raise ValueError(f"a position cannot be negative: {number}")
        digits = str(number)
        parts.append(f"{len(digits):02d}{digits}")
    return f"{kind}:" + ".".join(parts)


def kafka_sort_key(partition: int, offset: int) -> str:
    return sort_key(KAFKA_POSITION, (partition, offset))


def postgres_position(source: Mapping[str, Any]) -> tuple[int, ...] | None:
    """`lsn`, then the numbers of `sequence` (a JSON text `["<last commit lsn>", "<lsn>"]`)."""
    lsn = _as_int(source.get("lsn"))
    if lsn is None:
        return None
    return (lsn, *_sequence_numbers(source.get("sequence")))


def db2_position(source: Mapping[str, Any]) -> tuple[int, ...] | None:
    """`commit_lsn` then `change_lsn`, each hex segments such as `00000027:00000758:0003`."""
    commit = _hex_segments(source.get("commit_lsn"))
    change = _hex_segments(source.get("change_lsn"))
    if commit is None and change is None:
        return None
    return (*(commit or ()), *(change or ()))


def mysql_position(source: Mapping[str, Any]) -> tuple[int, ...] | None:
    """MySQL and MariaDB binlog coordinates: the numeric suffix of `file` (`mysql-bin.000003` is 3,
    so `.000010` follows `.000009`), `pos`, then a snapshot read before a streamed change at those
    coordinates, then `row` (the row within a multi-row binlog event)."""
    file_number = binlog_file_number(source.get("file"))
    pos = _as_int(source.get("pos"))
    if file_number is None or pos is None:
        return None
    row = _as_int(source.get("row"))
    return (file_number, pos, snapshot_rank(source.get("snapshot")), row if row is not None else 0)


def sqlserver_position(source: Mapping[str, Any]) -> tuple[int, ...] | None:
    """`commit_lsn`, then `change_lsn` (hex segments as for Db2), then `event_serial_no` (which
    tells apart the events of one change, such as the delete and create of a primary key update).

    A snapshot read has no `change_lsn`: its position is its `commit_lsn` alone, a prefix, so it
    sorts before the changes streamed at the same `commit_lsn`."""
    commit = _hex_segments(source.get("commit_lsn"))
    if commit is None:
        return None
    change = _hex_segments(source.get("change_lsn"))
    if change is None:
        return commit
    serial = _as_int(source.get("event_serial_no"))
    return (*commit, *change, serial if serial is not None else 0)


def oracle_position(source: Mapping[str, Any], kafka_position: tuple[int, int]) -> tuple[int, ...] | None:
    """A snapshot read: the `scn` it read the table as of, then `SNAPSHOT_READ`. A streamed change:
    `commit_scn` (its transaction's commit; `scn` when absent), `STREAMED`, its own `scn`, then its
    place within that SCN: `rs_id` (LogMiner's redo record address `0x<log sequence>.<block>.<byte
    offset>`, hex) and `ssn`, which together identify the change in the redo of its instance.

    SCNs are decimal text of any width, compared as numbers. Where `rs_id` is absent (older
    Debezium versions, the XStream adapter) the changes of one transaction at one SCN have no
    source order: the Kafka position breaks the tie, so that two of them are never taken for one
    event delivered twice (and one delivered twice counts twice, as with Kafka positions).
    """
    scn = _as_int(source.get("scn"))
    if scn is None:
        return None
    if snapshot_rank(source.get("snapshot")) == SNAPSHOT_READ:
        return (scn, SNAPSHOT_READ)
    commit_scn = _as_int(source.get("commit_scn"))
    return (commit_scn if commit_scn is not None else scn, STREAMED, scn, *_within_scn(source, kafka_position))


def _within_scn(source: Mapping[str, Any], kafka_position: tuple[int, int]) -> tuple[int, ...]:
    """An Oracle change's place among the changes at its SCN: its redo record, else Kafka's."""
    redo_record = _hex_segments(_without_hex_prefix(source.get("rs_id")), ".")
    if redo_record is None or len(redo_record) != _REDO_RECORD_ADDRESS_PARTS:
        return kafka_position
    ssn = _as_int(source.get("ssn"))
    return (*redo_record, ssn if ssn is not None else 0)


def mongodb_position(source: Mapping[str, Any]) -> tuple[int, ...] | None:
    """`ts_ms` then `ord` (the oplog timestamp's increment)."""
    ts_ms = _as_int(source.get("ts_ms"))
    if ts_ms is None:
        return None
    order = _as_int(source.get("ord"))
    return (ts_ms, order if order is not None else 0)


def binlog_file_number(file_name: Any) -> int | None:
    """The sequence number a binlog file name ends with (`mysql-bin.000003` → 3), else None."""
    if not isinstance(file_name, str):
        return None
    digits = file_name[len(file_name.rstrip(_ASCII_DIGITS)) :]
    return _as_int(digits) if digits else None


def snapshot_rank(snapshot: Any) -> int:
    """`SNAPSHOT_READ` for a snapshot read's `source.snapshot` (a string, or a boolean in old
    versions), else `STREAMED`."""
    if isinstance(snapshot, bool):
        return SNAPSHOT_READ if snapshot else STREAMED
    return SNAPSHOT_READ if isinstance(snapshot, str) and snapshot.lower() in SNAPSHOT_READ_FLAGS else STREAMED


def _as_int(value: Any) -> int | None:
    """A non-negative integer of at most `MAX_DIGITS` digits, as a JSON number or ASCII digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _position_number(value)
    # str.isdigit alone also takes "²" and other digits int() refuses or reads as another number.
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return _position_number(int(value)) if len(value) <= MAX_DIGITS else None
    return None


def _position_number(number: int) -> int | None:
    return number if 0 <= number < _POSITION_LIMIT else None


def _sequence_numbers(sequence: Any) -> tuple[int, ...]:
    if isinstance(sequence, str):
        try:
            sequence = json_text.loads(sequence)
        except RecordError:  # a malformed sequence only loses the tiebreak
            return ()
    if not isinstance(sequence, list):
        return ()
    numbers = [_as_int(item) for item in sequence]
    return tuple(number if number is not None else 0 for number in numbers)


def _without_hex_prefix(value: Any) -> Any:
    """Oracle's `rs_id` as LogMiner writes it, ` 0x000024.00004a1e.0010 `, without spaces and `0x`."""
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    return stripped[2:] if stripped[:2].lower() == "0x" else stripped


def _hex_segments(value: Any, separator: str = ":") -> tuple[int, ...] | None:
    if not isinstance(value, str) or not value:
        return None
    numbers: list[int] = []
    for segment in value.split(separator):
        # int(text, 16) alone would also take signs, spaces, `0x` and `_`, none of which an LSN has.
        if not segment or not _HEX_DIGITS.issuperset(segment) or len(segment) > MAX_DIGITS:
            return None
        number = _position_number(int(segment, 16))
        if number is None:
            return None
        numbers.append(number)
    return tuple(numbers)
