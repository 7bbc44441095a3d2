"""Landed Kafka records: one line of `kcat -C -J` output, or one Spark-Kafka Parquet row.

Both become a `LandedRecord`: the record's identity `(topic, partition, offset)`, its Kafka
timestamp, headers, and the key and payload as text. Parsing never raises: a line that cannot be a
record comes back with a quarantine reason instead.
"""

from collections.abc import Mapping
from types import NoneType
from typing import Any, NamedTuple, TypeGuard

import orjson

from udfs import json_text
from udfs.reasons import Reason, RecordError

MAX_PARTITION = 2**31 - 1
"""Kafka partitions are 32-bit (`int` in `LANDED_RECORD_TYPE`), offsets 64-bit (`bigint`)."""
MAX_OFFSET = 2**63 - 1
MAX_TIMESTAMP_MS = (2**63 - 1) // 1000
"""The widest epoch-millisecond count Spark's `timestamp_millis` turns into microseconds."""


class LandedRecord(NamedTuple):
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    kafka_ts_ms: int | None = None
    headers: tuple[tuple[str, str | None], ...] = ()
    key: str | None = None
    payload: str | None = None
    reason: str | None = None
    """Set when the record cannot be used; `detail` then says why."""
    detail: str | None = None


def parse_kcat_line(line: str) -> LandedRecord:
    """Parse one line in any of the shapes kcat's `-J` mode writes (docs/landing-formats.md)."""
    common = parse_common_kcat_line(line)
    return common if common is not None else parse_kcat_line_generally(line)


def parse_kcat_line_generally(line: str) -> LandedRecord:
    """`parse_kcat_line` by its rules alone, without the fast path for the common line."""
    try:
        return _parse_kcat_line(line)
    except RecordError as error:
        return LandedRecord(reason=error.reason.value, detail=error.detail)
    except RecursionError:
        # A key, payload or header value nested deeper than its JSON text can be written back.
        return LandedRecord(reason=Reason.INVALID_LANDING_LINE.value, detail="a value nested too deep")


def decode_kafka_bytes(value: bytes | None, what: str) -> tuple[str | None, str | None]:
    """UTF-8 text of a Parquet key or value, or `(None, detail)` when it is not text."""
    if value is None:
        return None, None
    try:
        return bytes(value).decode("utf-8"), None
    except UnicodeDecodeError as error:
        return None, f"{what} is not UTF-8: {error}"


def parse_common_kcat_line(line: str) -> LandedRecord | None:
    """The common line (text key and payload, headers as a flat list of texts, no error) read the
    shortest way; None for any other line (the general path decides, and says why one is refused).

    It returns what the general path returns for the same line: every member it reads is checked
    to be an integer, a string or null (`type(x) is int` refuses a bool, as `_is_int` does), so
    orjson's reading of them is the exact one (`_load_line`).
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(record) is not dict or "key_error" in record or "payload_error" in record:
        return None
    topic, partition, offset = record.get("topic"), record.get("partition"), record.get("offset")
    ts, key, payload = record.get("ts"), record.get("key"), record.get("payload")
    if (
        type(topic) is not str
        or not topic
        or type(partition) is not int
        or type(offset) is not int
        or not 0 <= partition <= MAX_PARTITION
        or not 0 <= offset <= MAX_OFFSET
        or type(ts) not in _INT_OR_NULL
        or type(key) not in _TEXT_OR_NULL
        or type(payload) not in _TEXT_OR_NULL
    ):
        return None
    headers = record.get("headers")
    if headers is None:
        header_pairs: tuple[tuple[str, str | None], ...] = ()
    elif type(headers) is list and _TEXT.issuperset(map(type, headers)):
        header_pairs = tuple(zip(headers[0::2], headers[1::2], strict=False))  # as `_headers` pairs them
    else:
        return None
    kafka_ts_ms = ts if ts is not None and -MAX_TIMESTAMP_MS <= ts <= MAX_TIMESTAMP_MS else None
    # Every field, in order: built at once, as `_make` builds it, without its call.
    return _new_record(LandedRecord, (topic, partition, offset, kafka_ts_ms, header_pairs, key, payload, None, None))


_new_record = tuple.__new__


_TEXT = frozenset({str})
_TEXT_OR_NULL = frozenset({str, NoneType})
_INT_OR_NULL = frozenset({int, NoneType})


def _parse_kcat_line(line: str) -> LandedRecord:
    try:
        record = _load_line(line)
    except RecordError as error:
        raise RecordError(Reason.INVALID_LANDING_LINE, f"not JSON: {error.detail}") from None
    if not isinstance(record, Mapping):
        raise RecordError(Reason.INVALID_LANDING_LINE, "a kcat line must be a JSON object")
    topic = record.get("topic")
    partition = record.get("partition")
    offset = record.get("offset")
    if not isinstance(topic, str) or not topic or not _is_int(partition) or not _is_int(offset):
        # An empty topic is none: Kafka refuses it, and a flattened record takes its table from it.
        raise RecordError(Reason.INVALID_LANDING_LINE, "topic, partition and offset are required")
    if not 0 <= partition <= MAX_PARTITION or not 0 <= offset <= MAX_OFFSET:
        detail = json_text.shorten(f"partition {partition} or offset {offset} is out of Kafka's range")
        raise RecordError(Reason.INVALID_LANDING_LINE, detail)
    ts = record.get("ts")
    landed = LandedRecord(
        topic=topic,
        partition=partition,
        offset=offset,
        kafka_ts_ms=ts if _is_int(ts) and abs(ts) <= MAX_TIMESTAMP_MS else None,
        headers=_headers(record.get("headers")),
        key=_message_text(record.get("key")),
        payload=_message_text(record.get("payload")),
    )
    errors = [f"{field}: {record[field]}" for field in ("key_error", "payload_error") if record.get(field)]
    if errors:
        detail = json_text.shorten("kcat could not deserialise the message; " + "; ".join(errors))
        return landed._replace(reason=Reason.DESERIALIZATION_ERROR.value, detail=detail)
    return landed


_SCALAR_TYPES = frozenset({str, int, bool, NoneType})
_MEMBERS_READ = ("topic", "partition", "offset", "ts", "headers", "key", "payload", "key_error", "payload_error")


def _load_line(line: str) -> Any:
    """The line's JSON, as exactly as `json_text.loads` reads it where it matters.

    A kcat line is mostly its key and payload as strings, so the exact reading's search of the
    whole text for numbers orjson rounds costs more than the reading itself. orjson's reading is
    kept unless a member this module reads holds a float, where a rounded number could show.
    """
    record = json_text.loads_rounded(line)
    if isinstance(record, Mapping) and not _uses_a_float(record):
        return record
    return json_text.loads(line)


def _uses_a_float(record: Mapping[str, Any]) -> bool:
    for member in _MEMBERS_READ:
        value = record.get(member)
        # A type lookup first: nearly every member read is a string, an integer or absent.
        if type(value) not in _SCALAR_TYPES and _holds_float(value):
            return True
    return False


def _holds_float(value: Any) -> bool:
    """Whether a JSON value is or holds a float; a loop, not a recursion, for values nested deep."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float):
            return True
        if isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _message_text(value: Any) -> str | None:
    """kcat writes the raw text, or a JSON value when it deserialised Avro itself."""
    if value is None or isinstance(value, str):
        return value
    return json_text.dumps(value)


def _headers(value: Any) -> tuple[tuple[str, str | None], ...]:
    """Headers as a flat `[name, value, ...]` list or as a map `{name: [value, ...]}`."""
    if isinstance(value, list):
        names, values = value[0::2], value[1::2]
        return tuple((str(name), _header_value(item)) for name, item in zip(names, values, strict=False))
    if isinstance(value, Mapping):
        pairs: list[tuple[str, str | None]] = []
        for name, items in value.items():
            for item in items if isinstance(items, list) else [items]:
                pairs.append((str(name), _header_value(item)))
        return tuple(pairs)
    return ()


def _header_value(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else json_text.dumps(value)
