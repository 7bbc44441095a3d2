"""Kafka records as they land: message texts, placement on partitions and offsets, part files.

Shared by every simulated source. `Sink` places records like a Kafka producer with a keyed
partitioner and streams them into rotating part files, as `kcat -C -J` JSON lines (`KcatPart`) or
as Parquet in the Spark Kafka source schema (`ParquetPart`); `Frame` and `Message` render
JsonConverter's `{"schema":S,"payload":P}` with the schema serialised (and escaped) once.
`KcatWriter` is the plain writer of the small Qlik and MongoDB streams: it keeps their lines in
memory and writes one file per partition.
"""

import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

# --------------------------------------------------------------------------------------------
# JSON text
# --------------------------------------------------------------------------------------------

_json_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _dumps_json(value: Any) -> bytes:
    return _json_encode(value).encode()


# orjson writes the same compact UTF-8 as `_dumps_json` for the values generated here (ints, short
# decimal floats, strings, null), only faster.
dumps: Callable[[Any], bytes] = orjson.dumps


def compact(value: Any) -> str:
    return _json_encode(value)


# --------------------------------------------------------------------------------------------
# Messages: `{"schema":S,"payload":P}` with S serialised (and JSON-escaped) once per topic
# --------------------------------------------------------------------------------------------


def escape_compact_json(text: bytes) -> bytes:
    """The inside of the JSON string literal that holds `text`, a compact JSON document.

    JSON encoders escape every control character, so such a text holds only two characters
    that need escaping in a string literal: the backslash and the quote. This equals
    `json.dumps(text, ensure_ascii=False)[1:-1]` (kcat leaves UTF-8 alone) at a fraction of
    the cost.
    """
    return text.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


class Frame:
    """The constant part of every message of one schema, pre-rendered in both forms a sink needs.

    Escaping the ~3 KB schema of every record for the kcat line would dominate the run time;
    JSON string escaping works character by character, so escape(prefix + body + suffix) equals
    escape(prefix) + escape(body) + escape(suffix) and only the short body is escaped per record.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        prefix = '{"schema":' + compact(schema) + ',"payload":'
        self.raw_prefix = prefix.encode()
        self.quoted_prefix = b'"' + escape_compact_json(self.raw_prefix)


class Message:
    """One key or value text: a frame plus the serialised payload, rendered on demand.

    A sink renders only the form it writes (`raw` for Parquet and partitioning, the quoted form
    for kcat lines), so nothing is rendered twice or in vain.
    """

    __slots__ = ("_raw", "body", "frame")

    def __init__(self, frame: Frame, body: bytes) -> None:
        """`body` is the payload as compact JSON (what `dumps` returns)."""
        self.frame = frame
        self.body = body
        self._raw: bytes | None = None

    def raw(self) -> bytes:
        """The message text as UTF-8, exactly as it sits in Kafka."""
        if self._raw is None:
            self._raw = self.frame.raw_prefix + self.body + b"}"
        return self._raw

    def quoted(self) -> bytes:
        """The message text as a JSON string literal, as kcat writes it into its JSON line."""
        return self.frame.quoted_prefix + escape_compact_json(self.body) + b'}"'


Headers = tuple[tuple[str, str], ...]


# --------------------------------------------------------------------------------------------
# Sinks: placement on partitions/offsets and rotating part files
# --------------------------------------------------------------------------------------------


class PartFile(Protocol):
    """One output file being written."""

    def append(
        self,
        topic: str,
        partition: int,
        offset: int,
        key: Message | None,
        value: Message | None,
        ts_ms: int,
        headers: Headers,
    ) -> None: ...

    def close(self) -> None: ...


class KcatPart:
    """JSON lines exactly as `kcat -C -J` prints them."""

    def __init__(self, path: Path) -> None:
        self._handle: BinaryIO = path.open("wb", buffering=1 << 20)
        self._write = self._handle.write
        self._topics: dict[str, bytes] = {}

    def append(
        self,
        topic: str,
        partition: int,
        offset: int,
        key: Message | None,
        value: Message | None,
        ts_ms: int,
        headers: Headers,
    ) -> None:
        topic_json = self._topics.get(topic)
        if topic_json is None:
            topic_json = self._topics.setdefault(topic, dumps(topic))
        # The line is `Message.quoted()` of key and value inlined, collected as pieces and
        # joined once: the ~3 KB schema prefix is copied once, and no call per piece is made.
        parts = [
            b'{"topic":%s,"partition":%d,"offset":%d,"tstype":"create","ts":%d,"broker":0,'
            % (topic_json, partition, offset, ts_ms)
        ]
        if headers:
            flat = [text for pair in headers for text in pair]
            parts += (b'"headers":', dumps(flat), b",")
        if key is None:
            parts.append(b'"key":null,"payload":')
        else:
            body = key.body.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
            parts += (b'"key":', key.frame.quoted_prefix, body, b'}","payload":')
        if value is None:
            parts.append(b"null}\n")
        else:
            body = value.body.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
            parts += (value.frame.quoted_prefix, body, b'}"}\n')
        self._write(b"".join(parts))

    def close(self) -> None:
        self._handle.close()


def parquet_schema() -> Any:
    """The schema of Spark's Kafka source (`includeHeaders=true`), as a pyarrow schema."""
    import pyarrow as pa

    header = pa.struct([("key", pa.string()), ("value", pa.binary())])
    return pa.schema(
        [
            ("key", pa.binary()),
            ("value", pa.binary()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("timestamp", pa.timestamp("us", tz="UTC")),
            ("timestampType", pa.int32()),
            ("headers", pa.list_(header)),
        ]
    )


class ParquetPart:
    """Parquet rows in the Spark Kafka source schema, flushed in bounded row groups."""

    _FLUSH_BYTES = 8 << 20  # bounds memory per open file whatever `lines_per_file` is

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self._schema = parquet_schema()
        self._writer = pq.ParquetWriter(path, self._schema)
        self._rows: list[tuple[Any, ...]] = []
        self._buffered = 0

    def append(
        self,
        topic: str,
        partition: int,
        offset: int,
        key: Message | None,
        value: Message | None,
        ts_ms: int,
        headers: Headers,
    ) -> None:
        key_raw = key.raw() if key is not None else None
        value_raw = value.raw() if value is not None else None
        # Spark's Kafka source gives null, not an empty array, for a record without headers.
        header_rows = [{"key": n, "value": v.encode()} for n, v in headers] or None
        self._rows.append((key_raw, value_raw, topic, partition, offset, ts_ms * 1000, 0, header_rows))
        self._buffered += len(key_raw or b"") + len(value_raw or b"")
        if self._buffered >= self._FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if not self._rows:
            return
        columns = [
            pa.array([row[index] for row in self._rows], type=column.type) for index, column in enumerate(self._schema)
        ]
        self._writer.write_table(pa.Table.from_arrays(columns, schema=self._schema))
        self._rows = []
        self._buffered = 0

    def close(self) -> None:
        self._flush()
        self._writer.close()


FORMATS = ("kcat", "parquet")
_PART_FACTORIES: dict[str, tuple[str, Callable[[Path], PartFile]]] = {
    "kcat": (".json", KcatPart),
    "parquet": (".parquet", ParquetPart),
}


class _Slot:
    """One (topic, partition): its next offset and its open file."""

    __slots__ = ("file_number", "lines", "offset", "part")

    def __init__(self) -> None:
        self.offset = 0
        self.file_number = 0
        self.lines = 0
        self.part: PartFile | None = None


class Sink:
    """Assigns partition and offset like a Kafka producer with a keyed partitioner, then writes.

    Files are opened lazily and closed when full, so no empty file is written and at most one
    file per (topic, partition) is open. `topics` are all the topics it may be given.
    """

    def __init__(self, out_dir: Path, topics: Sequence[str], fmt: str, partitions: int, lines_per_file: int) -> None:
        self._out_dir = out_dir
        self._suffix, self._open = _PART_FACTORIES[fmt]
        self._partitions = partitions
        self._lines_per_file = lines_per_file
        self._slots = {topic: [_Slot() for _ in range(partitions)] for topic in topics}
        self.files: list[Path] = []

    def emit(
        self,
        topic: str,
        key: Message | None,
        value: Message | None,
        ts_ms: int,
        headers: Headers = (),
    ) -> int:
        """Write one record (`value is None`: a tombstone); return its partition."""
        # Null keys (truncate) cannot be hashed: they go to partition 0.
        partition = zlib.crc32(key.raw()) % self._partitions if key is not None else 0
        slot = self._slots[topic][partition]
        part = slot.part
        if part is None:
            part = slot.part = self._open(self._new_path(topic, partition, slot.file_number))
        part.append(topic, partition, slot.offset, key, value, ts_ms, headers)
        slot.offset += 1
        slot.lines += 1
        if slot.lines >= self._lines_per_file:
            part.close()
            slot.part, slot.lines = None, 0
            slot.file_number += 1
        return partition

    def records_per_topic(self) -> dict[str, int]:
        return {topic: sum(slot.offset for slot in slots) for topic, slots in self._slots.items()}

    def _new_path(self, topic: str, partition: int, number: int) -> Path:
        directory = self._out_dir / topic
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"part-{partition}-{number:05d}{self._suffix}"
        self.files.append(path)
        return path

    def close(self) -> None:
        for slots in self._slots.values():
            for slot in slots:
                if slot.part is not None:
                    slot.part.close()
                    slot.part = None


@dataclass
class KcatWriter:
    """kcat `-J` lines per topic, partitioned by a stable hash of the key like Kafka's producer."""

    out_dir: Path
    partitions: int
    lines: dict[tuple[str, int], list[str]] = field(default_factory=dict)

    def emit(self, topic: str, key: str | None, payload: str | None, ts_ms: int) -> None:
        partition = zlib.crc32(key.encode()) % self.partitions if key is not None else 0
        lines = self.lines.setdefault((topic, partition), [])
        record = {
            "topic": topic,
            "partition": partition,
            "offset": len(lines),
            "tstype": "create",
            "ts": ts_ms,
            "broker": 0,
            "key": key,
            "payload": payload,
        }
        lines.append(json.dumps(record, ensure_ascii=False))

    def close(self) -> None:
        for (topic, partition), lines in sorted(self.lines.items()):
            path = self.out_dir / topic / f"part-{partition}-00000.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
