"""The contract of the parsing core's entry points, as assertions the fuzz and corpus tests share.

A landed line becomes a `LandedRecord` (with a reason when it is no usable record); a record becomes
exactly one of a change, an ignored record or a quarantine reason; and every result fits the struct
its Spark UDF declares in `udfs.spark`: text Spark can write as UTF-8 (no unpaired surrogates),
integers within `int` / `bigint`, epoch milliseconds that `timestamp_millis` takes.
"""

import json
from typing import Any, TypeGuard

from udfs.events import ParsedRecord
from udfs.landing import LandedRecord
from udfs.reasons import IGNORE_CLASSES, QUARANTINE_REASONS, Outcome
from udfs.spark import LANDED_RECORD_TYPE, PARSED_RECORD_TYPE

OUTCOMES = frozenset(outcome.value for outcome in Outcome)
CHANGE_OPS = frozenset({"c", "r", "u", "d", "t"})
MAX_INT = 2**31 - 1
MAX_BIGINT = 2**63 - 1
MAX_TIMESTAMP_MS = MAX_BIGINT // 1000
"""Beyond this Spark's `timestamp_millis`, which the SQL applies to every `*_ts_ms`, overflows."""


PARSED_FIELDS = [(field.name, field.dataType.simpleString()) for field in PARSED_RECORD_TYPE.fields]
LANDED_FIELDS = [(field.name, field.dataType.simpleString()) for field in LANDED_RECORD_TYPE.fields]


def is_text(value: Any) -> TypeGuard[str]:
    """A str that Spark (Arrow or pickle) can write as UTF-8."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def fits(value: Any, kind: str) -> bool:
    """Whether Spark can take `value` for a struct field of type `kind`."""
    if value is None:
        return True
    if kind == "string":
        return is_text(value)
    if kind in ("int", "bigint"):
        bound = MAX_INT if kind == "int" else MAX_BIGINT
        return isinstance(value, int) and not isinstance(value, bool) and -bound - 1 <= value <= bound
    if kind == "array<string>":
        return isinstance(value, (list, tuple)) and all(item is None or is_text(item) for item in value)
    if kind == "array<struct<key:string,value:string>>":
        return isinstance(value, (list, tuple)) and all(
            isinstance(item, (list, tuple)) and len(item) == 2 and all(fits(part, "string") for part in item)
            for item in value
        )
    raise AssertionError(f"no check for Spark type {kind}: add one")


def assert_fits(row: tuple[Any, ...], struct: list[tuple[str, str]], cls: type[Any]) -> None:
    """A UDF's tuple has the struct's fields, in the record type's order, each of a fitting value."""
    assert [name for name, _ in struct] == list(cls._fields)
    assert len(row) == len(struct)
    for value, (name, kind) in zip(row, struct, strict=True):
        assert fits(value, kind), f"{name} = {value!r:.200} does not fit {kind}"


def is_sort_key(position: Any) -> bool:
    """`k:` or `s:`, then numbers joined by `.`, each its digit count in two digits then its digits."""
    if not is_text(position) or position[:2] not in ("k:", "s:"):
        return False
    parts = position[2:].split(".")
    return all(
        len(part) >= 3 and part.isascii() and part.isdigit() and int(part[:2]) == len(part) - 2 for part in parts
    )


def is_object_text(text: Any) -> bool:
    return is_text(text) and isinstance(json.loads(text), dict)


def check_parsed(parsed: ParsedRecord) -> ParsedRecord:
    """One of three outcomes, each with the fields it promises, and a struct Spark takes."""
    assert isinstance(parsed, ParsedRecord)
    assert parsed.outcome in OUTCOMES
    if parsed.outcome == Outcome.QUARANTINE:
        assert parsed.reason in QUARANTINE_REASONS, parsed.reason
        assert is_text(parsed.detail) and parsed.detail.strip(), parsed
        assert (parsed.ignore_class, parsed.op) == (None, None)
    elif parsed.outcome == Outcome.IGNORED:
        assert parsed.ignore_class in IGNORE_CLASSES, parsed.ignore_class
        assert (parsed.reason, parsed.op) == (None, None)
    else:
        assert (parsed.reason, parsed.ignore_class) == (None, None)
        assert parsed.source_format in ("debezium", "qlik")
        assert parsed.op in CHANGE_OPS, parsed.op
        assert is_text(parsed.source_table) and parsed.source_table, parsed
        assert is_sort_key(parsed.position), parsed.position
        if parsed.op == "t":
            assert (parsed.row_key, parsed.after) == (None, None)
        else:
            key = json.loads(parsed.row_key or "null")
            assert isinstance(key, dict) and key, parsed.row_key
        if parsed.op in ("c", "r"):
            assert is_object_text(parsed.after), parsed.after
        if parsed.op == "u":
            assert parsed.after is not None or parsed.patch is not None
        if parsed.op == "d":
            assert parsed.after is None, parsed.after
        for image in (parsed.before, parsed.after, parsed.patch):
            assert image is None or is_object_text(image), image
    for name in ("source_ts_ms", "event_ts_ms"):
        millis = getattr(parsed, name)
        assert millis is None or abs(millis) <= MAX_TIMESTAMP_MS, f"{name} = {millis}"
    assert_fits(parsed, PARSED_FIELDS, ParsedRecord)
    return parsed


def check_landed_row(landed: LandedRecord | None) -> LandedRecord:
    """What `cdc_parse_kcat_line` returns for a line: a record, with a reason or an identity."""
    assert isinstance(landed, LandedRecord)
    assert_fits(landed, LANDED_FIELDS, LandedRecord)
    if landed.reason is not None:
        assert landed.reason in QUARANTINE_REASONS
        assert is_text(landed.detail) and landed.detail.strip()
    if landed.reason != "invalid_landing_line":
        assert is_text(landed.topic) and landed.topic
        assert landed.partition is not None and 0 <= landed.partition <= MAX_INT
        assert landed.offset is not None and 0 <= landed.offset <= MAX_BIGINT
    if landed.kafka_ts_ms is not None:
        assert abs(landed.kafka_ts_ms) <= MAX_TIMESTAMP_MS
    return landed
