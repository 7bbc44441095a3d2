"""Sort keys that order events by their source position, compared as numbers.

A position is a tuple of non-negative integers (PostgreSQL `lsn` then `sequence`, Db2 commit and
change LSN segments, ...). Its sort key is text whose plain string order is the numeric order of
the tuple, so SQL can order, compare and deduplicate positions of any width with one string column:
each number is written as its digit count (two digits) followed by its digits, numbers joined by
`.` (which sorts before every digit, so a prefix sorts first).
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


def mongodb_position(source: Mapping[str, Any]) -> tuple[int, ...] | None:
    """`ts_ms` then `ord` (the oplog timestamp's increment)."""
    ts_ms = _as_int(source.get("ts_ms"))
    if ts_ms is None:
        return None
    order = _as_int(source.get("ord"))
    return (ts_ms, order if order is not None else 0)


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


def _hex_segments(value: Any) -> tuple[int, ...] | None:
    if not isinstance(value, str) or not value:
        return None
    numbers: list[int] = []
    for segment in value.split(":"):
        # int(text, 16) alone would also take signs, spaces, `0x` and `_`, none of which an LSN has.
        if not segment or not _HEX_DIGITS.issuperset(segment) or len(segment) > MAX_DIGITS:
            return None
        number = _position_number(int(segment, 16))
        if number is None:
            return None
        numbers.append(number)
    return tuple(numbers)
