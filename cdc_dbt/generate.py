"""Generate realistic, deterministic Debezium PostgreSQL change-event streams as landed files.

The stream is what a Debezium 2.5 PostgreSQL connector named `dbserver1` (JsonConverter with
schemas, `provide.transaction.metadata=true`, tombstones on delete) would publish for the
tutorial `inventory` schema, extended with logical types (`MicroTimestamp`, `Date`, `Decimal`):

1. an initial snapshot (`r` events, one LSN and txId, `source.snapshot` first/true/last);
2. streaming transactions of 1-4 events with BEGIN/END records on `dbserver1.transaction`,
   creates, updates (REPLICA IDENTITY DEFAULT: no before image), TOAST-placeholder updates,
   deletes with their tombstones, primary-key changes and one truncate of `inventory.orders`.

Records are placed on partitions by a stable hash of the key text and written as `kcat -C -J`
JSON lines or as Parquet in the Spark Kafka source schema, streamed file by file, so millions of
events never sit in memory. The same seed always gives byte-identical files. An optional oracle
file holds the final state every consumer should reach (see `generate`).

CLI: `python -m cdc_dbt.generate --out DIR [--events N] [--keys K] [--seed S] [--partitions P]
[--format kcat|parquet] [--expected FILE] [--demo]`.
"""

import argparse
import base64
import functools
import json
import random
import sys
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

import orjson

from cdc_dbt.generate_other_sources import write_other_sources

# --------------------------------------------------------------------------------------------
# Constants of the simulated connector
# --------------------------------------------------------------------------------------------

SERVER_NAME = "dbserver1"
DATABASE = "inventory_db"
PG_SCHEMA = "inventory"
DEBEZIUM_VERSION = "2.5.4.Final"
TRANSACTION_TOPIC = f"{SERVER_NAME}.transaction"
UNAVAILABLE_VALUE = "__debezium_unavailable_value"
"""Debezium's placeholder for an unchanged TOASTed column it could not read."""
NEW_KEY_HEADER = "__debezium.newkey"
OLD_KEY_HEADER = "__debezium.oldkey"

FORMATS = ("kcat", "parquet")
DEMO_PRESET = {"events": 400, "keys": 120, "partitions": 2}
"""`--demo`: small enough to read, large enough to hold every kind of event."""
MIN_EVENTS = 40
MIN_KEYS = 16

_STREAM_START = datetime(2024, 3, 4, 8, 0, tzinfo=UTC)
_EPOCH_DATE = date(1970, 1, 1)
_EPOCH_DATETIME = datetime(1970, 1, 1)  # MicroTimestamp has no zone: naive on purpose
_MS_PER_DAY = 86_400_000
T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# JSON text
# --------------------------------------------------------------------------------------------

_json_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _dumps_json(value: Any) -> bytes:
    return _json_encode(value).encode()


# orjson writes the same compact UTF-8 as `_dumps_json` for the values generated here (ints, short
# decimal floats, strings, null), only faster.
dumps: Callable[[Any], bytes] = orjson.dumps


def _compact(value: Any) -> str:
    return _json_encode(value)


# --------------------------------------------------------------------------------------------
# Schemas (exactly as JsonConverter renders Debezium's Connect schemas)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One table column and its Kafka Connect field schema."""

    name: str
    type: str
    optional: bool = False
    logical: str | None = None
    parameters: tuple[tuple[str, str], ...] = ()

    def field_schema(self) -> dict[str, Any]:
        # JsonConverter key order: type, optional, name, version, parameters, then field.
        schema: dict[str, Any] = {"type": self.type, "optional": self.optional}
        if self.logical is not None:
            schema["name"] = self.logical
            schema["version"] = 1
        if self.parameters:
            schema["parameters"] = dict(self.parameters)
        schema["field"] = self.name
        return schema


MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
DATE = "io.debezium.time.Date"
DECIMAL = "org.apache.kafka.connect.data.Decimal"
PRICE_SCALE = 2


@dataclass(frozen=True)
class Table:
    """A source table: its columns (the first is the primary key `id`) and first id."""

    name: str
    columns: tuple[Column, ...]
    first_id: int
    qualified: str = field(init=False)
    """`inventory.customers`: Debezium's data collection name."""
    topic: str = field(init=False)

    def __post_init__(self) -> None:
        # Plain attributes, not properties: they are read for every event.
        object.__setattr__(self, "qualified", f"{PG_SCHEMA}.{self.name}")
        object.__setattr__(self, "topic", f"{SERVER_NAME}.{PG_SCHEMA}.{self.name}")


CUSTOMERS = Table(
    "customers",
    (
        Column("id", "int32"),
        Column("first_name", "string"),
        Column("last_name", "string"),
        Column("email", "string"),
        Column("updated_at", "int64", logical=MICRO_TIMESTAMP),
    ),
    first_id=1001,
)
PRODUCTS = Table(
    "products",
    (
        Column("id", "int32"),
        Column("name", "string"),
        Column("description", "string", optional=True),
        Column("weight", "double", optional=True),
        Column(
            "price",
            "bytes",
            logical=DECIMAL,
            parameters=(("scale", str(PRICE_SCALE)), ("connect.decimal.precision", "10")),
        ),
    ),
    first_id=101,
)
ORDERS = Table(
    "orders",
    (
        Column("id", "int32"),
        Column("order_date", "int32", logical=DATE),
        Column("purchaser", "int32"),
        Column("quantity", "int32"),
        Column("product_id", "int32"),
    ),
    first_id=10001,
)
TABLES = (CUSTOMERS, PRODUCTS, ORDERS)
TOPICS = (*(table.topic for table in TABLES), TRANSACTION_TOPIC)


def _source_schema() -> dict[str, Any]:
    def plain(kind: str, name: str, optional: bool) -> dict[str, Any]:
        return {"type": kind, "optional": optional, "field": name}

    snapshot = {
        "type": "string",
        "optional": True,
        "name": "io.debezium.data.Enum",
        "version": 1,
        "parameters": {"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},
        "default": "false",
        "field": "snapshot",
    }
    fields = [
        plain("string", "version", False),
        plain("string", "connector", False),
        plain("string", "name", False),
        plain("int64", "ts_ms", False),
        snapshot,
        plain("string", "db", False),
        plain("string", "sequence", True),
        plain("string", "schema", False),
        plain("string", "table", False),
        plain("int64", "txId", True),
        plain("int64", "lsn", True),
        plain("int64", "xmin", True),
    ]
    return {
        "type": "struct",
        "fields": fields,
        "optional": False,
        "name": "io.debezium.connector.postgresql.Source",
        "field": "source",
    }


def _transaction_block_schema() -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "id"},
            {"type": "int64", "optional": False, "field": "total_order"},
            {"type": "int64", "optional": False, "field": "data_collection_order"},
        ],
        "optional": True,
        "name": "event.block",
        "version": 1,
        "field": "transaction",
    }


def envelope_schema(table: Table) -> dict[str, Any]:
    """The value schema Debezium registers for a table's change events."""
    prefix = f"{SERVER_NAME}.{table.qualified}"

    def row(field_name: str) -> dict[str, Any]:
        return {
            "type": "struct",
            "fields": [column.field_schema() for column in table.columns],
            "optional": True,
            "name": f"{prefix}.Value",
            "field": field_name,
        }

    return {
        "type": "struct",
        "fields": [
            row("before"),
            row("after"),
            _source_schema(),
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
            _transaction_block_schema(),
        ],
        "optional": False,
        "name": f"{prefix}.Envelope",
        "version": 1,
    }


def key_schema(table: Table) -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [table.columns[0].field_schema()],
        "optional": False,
        "name": f"{SERVER_NAME}.{table.qualified}.Key",
    }


def _transaction_value_schema() -> dict[str, Any]:
    collection = {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "data_collection"},
            {"type": "int64", "optional": False, "field": "event_count"},
        ],
        "optional": False,
    }
    return {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "status"},
            {"type": "string", "optional": False, "field": "id"},
            {"type": "int64", "optional": True, "field": "event_count"},
            {"type": "array", "items": collection, "optional": True, "field": "data_collections"},
            {"type": "int64", "optional": False, "field": "ts_ms"},
        ],
        "optional": False,
        "name": "io.debezium.connector.common.TransactionMetadataValue",
        "version": 1,
    }


def _transaction_key_schema() -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [{"type": "string", "optional": False, "field": "id"}],
        "optional": False,
        "name": "io.debezium.connector.common.TransactionMetadataKey",
        "version": 1,
    }


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
        prefix = '{"schema":' + _compact(schema) + ',"payload":'
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
# Value encoding (wire) and decoding (oracle)
# --------------------------------------------------------------------------------------------


def encode_decimal(unscaled: int) -> str:
    """Base64 of the big-endian two's-complement bytes, as Java's BigInteger.toByteArray()."""
    magnitude_bits = (unscaled if unscaled >= 0 else ~unscaled).bit_length()
    raw = unscaled.to_bytes(magnitude_bits // 8 + 1, "big", signed=True)
    return base64.b64encode(raw).decode()


def format_decimal(unscaled: int, scale: int = PRICE_SCALE) -> str:
    """`1250` → `"12.50"`: exact, never through a float."""
    sign = "-" if unscaled < 0 else ""
    whole, fraction = divmod(abs(unscaled), 10**scale)
    return f"{sign}{whole}.{fraction:0{scale}d}"


def format_date(days: int) -> str:
    return (_EPOCH_DATE + timedelta(days=days)).isoformat()


def format_micro_timestamp(micros: int) -> str:
    return (_EPOCH_DATETIME + timedelta(microseconds=micros)).strftime("%Y-%m-%dT%H:%M:%S.%f")


_ORACLE_DECODERS: dict[str, Callable[[int], str]] = {
    MICRO_TIMESTAMP: format_micro_timestamp,
    DATE: format_date,
    DECIMAL: format_decimal,
}

Row = dict[str, Any]
"""A row as the generator keeps it: Connect values, except decimals as unscaled ints."""


def wire_row(table: Table, row: Row) -> Row:
    """The row as it appears in `before`/`after`: decimals become base64 bytes."""
    if table is not PRODUCTS:
        return row
    wired = dict(row)
    wired["price"] = encode_decimal(row["price"])
    return wired


def decoded_row(table: Table, row: Row) -> Row:
    """The row as consumers must present it (docs/output-tables.md#row-json)."""
    decoded = {}
    for column in table.columns:
        value = row[column.name]
        decoder = _ORACLE_DECODERS.get(column.logical or "")
        decoded[column.name] = decoder(value) if decoder and value is not None else value
    return decoded


def canonical_key(row_id: int) -> str:
    return f'{{"id":{row_id}}}'


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
    file per (topic, partition) is open.
    """

    def __init__(self, out_dir: Path, fmt: str, partitions: int, lines_per_file: int) -> None:
        self._out_dir = out_dir
        self._suffix, self._open = _PART_FACTORIES[fmt]
        self._partitions = partitions
        self._lines_per_file = lines_per_file
        self._slots = {topic: [_Slot() for _ in range(partitions)] for topic in TOPICS}
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


# --------------------------------------------------------------------------------------------
# The database being simulated
# --------------------------------------------------------------------------------------------


class Dice(random.Random):
    """A seeded generator with cheap draws.

    `randint`/`choice` go through rejection sampling in pure Python; scaling `random()` is
    several times faster, and its bias (below 2**-40 here) is irrelevant for test data. What
    matters is determinism per seed, which both have.
    """

    def between(self, low: int, high: int) -> int:
        """Uniform integer in [low, high]."""
        return low + int(self.random() * (high - low + 1))

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        return int(self.random() * n)

    def pick(self, options: Sequence[T]) -> T:
        return options[int(self.random() * len(options))]


class LiveRows:
    """Live rows of one table with O(1) insert, delete and uniform random choice."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.rows: dict[int, Row] = {}
        self._ids: list[int] = []
        self._index: dict[int, int] = {}
        self.next_id = table.first_id

    def __len__(self) -> int:
        return len(self._ids)

    def allocate_id(self) -> int:
        # Like a SERIAL column: ids are never reused, even after a truncate.
        row_id = self.next_id
        self.next_id += 1
        return row_id

    def put(self, row: Row) -> None:
        row_id = row["id"]
        if row_id not in self.rows:
            self._index[row_id] = len(self._ids)
            self._ids.append(row_id)
        self.rows[row_id] = row

    def remove(self, row_id: int) -> Row:
        index = self._index.pop(row_id)
        last = self._ids.pop()
        if last != row_id:  # move the last id into the hole
            self._ids[index] = last
            self._index[last] = index
        return self.rows.pop(row_id)

    def clear(self) -> None:
        self.rows.clear()
        self._ids.clear()
        self._index.clear()

    def random_id(self, rng: Dice) -> int:
        return self._ids[rng.below(len(self._ids))]


_FIRST_NAMES = (
    "Anne", "Sally", "George", "Edward", "José", "Zoë", "Søren", "Aiko",
    "Liam", "Priya", "Mateus", "Fatima", "Noah", "Olga", "Chen", "Amara",
)  # fmt: skip
_LAST_NAMES = (
    "Kretchmar", "Thomas", "Bailey", "Walker", "O'Brien", "Müller", "García",
    "Nakamura", "Okafor", "Kowalski", "Singh", "Dubois", "Haddad", "Lindqvist",
)  # fmt: skip
_DOMAINS = ("noanswer.org", "acme.com", "example.net", "walker.com", "mail.test")
# Descriptions include quotes, a backslash, a tab and non-ASCII text on purpose: they must
# survive the double JSON encoding of kcat lines.
_PRODUCTS = (
    ("scooter", "Small 2-wheel scooter"),
    ("car battery", "12V car battery"),
    ("12-pack drill bits", "12-pack of drill bits with sizes ranging from #40 to #3"),
    ("hammer", "12oz carpenter's hammer"),
    ("rocks", "box of assorted rocks"),
    ("jacket", "water resistent black wind breaker"),
    ("spare tire", "24 inch spare tire"),
    ("ruler", '12" steel ruler'),
    ("label maker", "prints C:\\labels\\ paths"),
    ("tent", "2-person tent\twith rain fly"),
    ("café table", "bistro table — solid oak"),
    ("lantern", None),
)
_CATALOG_DESCRIPTIONS = dict(_PRODUCTS)


@functools.cache
def _ascii_slug(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isascii() and ch.isalnum())


@dataclass(slots=True)
class Change:
    """One row-change event, in wire form, before it gets its position."""

    table: Table
    op: str
    row_id: int | None
    before: Row | None
    after: Row | None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Transaction:
    commit_ts_ms: int
    changes: list[Change]


class Database:
    """The simulated `inventory` database: current rows plus realistic value factories."""

    def __init__(self, rng: Dice) -> None:
        self.rng = rng
        self.live = {table.name: LiveRows(table) for table in TABLES}
        self.toast_updates = 0
        self.pk_changes = 0

    # -- row factories -----------------------------------------------------------------------

    def new_customer(self, ts_ms: int) -> Row:
        rng = self.rng
        row_id = self.live["customers"].allocate_id()
        first, last = rng.pick(_FIRST_NAMES), rng.pick(_LAST_NAMES)
        return {
            "id": row_id,
            "first_name": first,
            "last_name": last,
            "email": self._email(first, last, row_id),
            "updated_at": self._written_at(ts_ms),
        }

    def new_product(self) -> Row:
        rng = self.rng
        name, description = rng.pick(_PRODUCTS)
        if description is not None and rng.random() < 0.08:
            description = None
        return {
            "id": self.live["products"].allocate_id(),
            "name": name,
            "description": description,
            "weight": self._weight(),
            "price": self._price(),
        }

    def new_order(self, ts_ms: int) -> Row:
        rng = self.rng
        return {
            "id": self.live["orders"].allocate_id(),
            "order_date": ts_ms // _MS_PER_DAY - rng.between(0, 2),
            "purchaser": self.live["customers"].random_id(rng),
            "quantity": rng.between(1, 10),
            "product_id": self.live["products"].random_id(rng),
        }

    def new_row(self, table: Table, ts_ms: int) -> Row:
        if table is CUSTOMERS:
            return self.new_customer(ts_ms)
        if table is PRODUCTS:
            return self.new_product()
        return self.new_order(ts_ms)

    def _email(self, first: str, last: str, row_id: int) -> str:
        domain = self.rng.pick(_DOMAINS)
        return f"{_ascii_slug(first)}.{_ascii_slug(last)}{row_id % 997}@{domain}"

    def _written_at(self, ts_ms: int) -> int:
        # The row is written some time before its transaction commits.
        return ts_ms * 1000 - self.rng.between(150, 900_000)

    def _weight(self) -> float | None:
        # Grams over 1000: always a short decimal, so every JSON encoder prints it alike.
        return None if self.rng.random() < 0.1 else self.rng.between(50, 30_000) / 1000

    def _price(self) -> int:
        rng = self.rng
        roll = rng.random()
        if roll < 0.03:  # store credit: negative decimals exercise the two's complement sign
            return -rng.between(1, 50_000)
        if roll < 0.06:  # big-ticket items: up to 10 digits of precision
            return rng.between(10**7, 10**10 - 1)
        return rng.between(0, 99_999)

    # -- changes -------------------------------------------------------------------------------

    def create(self, table: Table, ts_ms: int) -> Change:
        row = self.new_row(table, ts_ms)
        self.live[table.name].put(row)
        return Change(table, "c", row["id"], None, wire_row(table, row))

    def update(self, table: Table, row_id: int, ts_ms: int) -> Change:
        live = self.live[table.name]
        row = dict(live.rows[row_id])
        wired_description: str | None = None
        if table is CUSTOMERS:
            self._change_customer(row, ts_ms)
        elif table is PRODUCTS:
            wired_description = self._change_product(row)
        else:
            self._change_order(row)
        live.put(row)
        after = wire_row(table, row)
        if wired_description is not None:
            after["description"] = wired_description
        return Change(table, "u", row_id, None, after)

    def _change_customer(self, row: Row, ts_ms: int) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.5:
            row["email"] = self._email(row["first_name"], row["last_name"], row["id"])
        elif roll < 0.8:
            row["last_name"] = rng.pick(_LAST_NAMES)
        else:
            row["first_name"] = rng.pick(_FIRST_NAMES)
        row["updated_at"] = self._written_at(ts_ms)

    def _change_product(self, row: Row) -> str | None:
        """Change a product; return the TOAST placeholder when the update carries it."""
        rng = self.rng
        if row["description"] is not None and rng.random() < 0.25:
            # An update not touching the TOASTed description: Debezium cannot read it.
            row["price"] = self._price()
            self.toast_updates += 1
            return UNAVAILABLE_VALUE
        roll = rng.random()
        if roll < 0.4:
            row["price"] = self._price()
        elif roll < 0.7:
            row["weight"] = self._weight()
        else:
            catalog = _CATALOG_DESCRIPTIONS.get(row["name"]) or row["name"]
            row["description"] = f"{catalog} (rev {rng.between(2, 9)})"
        return None

    def _change_order(self, row: Row) -> None:
        rng = self.rng
        if rng.random() < 0.7:
            row["quantity"] = rng.between(1, 10)
        else:
            row["purchaser"] = self.live["customers"].random_id(rng)

    def delete(self, table: Table, row_id: int) -> Change:
        self.live[table.name].remove(row_id)
        return Change(table, "d", row_id, _key_only_before(table, row_id), None)

    def change_primary_key(self, table: Table, old_id: int, ts_ms: int) -> list[Change]:
        """`UPDATE ... SET id = <new>`: Debezium emits a delete of the old key, then a create."""
        live = self.live[table.name]
        row = dict(live.remove(old_id))
        row["id"] = live.allocate_id()
        if table is CUSTOMERS:
            row["updated_at"] = self._written_at(ts_ms)
        live.put(row)
        self.pk_changes += 1
        old_key, new_key = canonical_key(old_id), canonical_key(row["id"])
        # Both at consecutive LSNs of one transaction (the connector gives each event its own).
        delete = Change(table, "d", old_id, _key_only_before(table, old_id), None, ((NEW_KEY_HEADER, new_key),))
        create = Change(table, "c", row["id"], None, wire_row(table, row), ((OLD_KEY_HEADER, old_key),))
        return [delete, create]

    def truncate(self, table: Table) -> Change:
        self.live[table.name].clear()
        return Change(table, "t", None, None, None)


def _key_only_before(table: Table, row_id: int) -> Row:
    # REPLICA IDENTITY DEFAULT: the old tuple carries only the key; the rest is null.
    return {column.name: (row_id if column.name == "id" else None) for column in table.columns}


# --------------------------------------------------------------------------------------------
# The workload: which changes happen, in which transactions
# --------------------------------------------------------------------------------------------

_SNAPSHOT_SHARE = {"customers": 0.3, "products": 0.2}  # orders take the rest
_CREATE_WEIGHTS = ((CUSTOMERS, 0.3), (PRODUCTS, 0.2), (ORDERS, 0.5))
_UPDATE_WEIGHTS = ((CUSTOMERS, 0.3), (PRODUCTS, 0.3), (ORDERS, 0.4))
_TRY_ORDER = {first.name: (first, *(t for t in TABLES if t is not first)) for first in TABLES}
"""When a table has no row to update, try the others in this order."""
_DELETE_SHARE = 0.04
_SNAPSHOT_ROWS_PER_MS = 40
_TRUNCATE_AT = 0.6  # fraction of the streaming phase
_TRUNCATE_COST = 3  # the truncate, then a transaction of two fresh orders
_PK_CHANGE_COST = 2
_PK_CHANGE_EVERY = 100_000  # streaming events per primary-key change (at least one)


@dataclass(frozen=True)
class Plan:
    """How many events of each kind, fixed up front so `events` and `keys` are met."""

    snapshot: dict[str, int]
    stream_events: int
    random_creates: int
    pk_changes: int

    @classmethod
    def for_size(cls, events: int, keys: int) -> "Plan":
        if events < MIN_EVENTS:
            raise ValueError(f"events must be at least {MIN_EVENTS}, got {events}")
        if not MIN_KEYS <= keys <= events:
            raise ValueError(f"keys must be between {MIN_KEYS} and events ({events}), got {keys}")
        snapshot_total = max(6, keys // 2)
        customers = max(2, round(snapshot_total * _SNAPSHOT_SHARE["customers"]))
        products = max(2, round(snapshot_total * _SNAPSHOT_SHARE["products"]))
        snapshot = {
            "customers": customers,
            "products": products,
            "orders": snapshot_total - customers - products,
        }
        stream_events = events - snapshot_total
        pk_changes = 1 + stream_events // _PK_CHANGE_EVERY
        # Each primary-key change and the two post-truncate orders bring a new key too.
        random_creates = keys - snapshot_total - pk_changes - 2
        return cls(snapshot, stream_events, max(0, random_creates), pk_changes)


class Workload:
    """Decides the stream, transaction by transaction, against the simulated database."""

    def __init__(self, rng: Dice, plan: Plan) -> None:
        self.rng = rng
        self.plan = plan
        self.db = Database(rng)
        self.ts_ms = int(_STREAM_START.timestamp() * 1000)
        self._creates_left = plan.random_creates
        self._pk_tables = [CUSTOMERS, PRODUCTS]

    def snapshot(self) -> tuple[list[Change], int]:
        """The initial rows as `r` events, and the time the snapshot started reading them."""
        changes = []
        for table in TABLES:
            for _ in range(self.plan.snapshot[table.name]):
                # Rows were written over the weeks before the snapshot.
                written = self.ts_ms - self.rng.between(3_600_000, 60 * _MS_PER_DAY)
                row = self.db.new_row(table, written)
                self.db.live[table.name].put(row)
                changes.append(Change(table, "r", row["id"], None, wire_row(table, row)))
        started = self.ts_ms
        # Streaming starts after the snapshot finished reading.
        self.ts_ms += len(changes) // _SNAPSHOT_ROWS_PER_MS + 1000
        return changes, started

    def stream(self) -> Iterator[Transaction]:
        """Streaming transactions until exactly `plan.stream_events` events were produced."""
        total = self.plan.stream_events
        specials = self._special_schedule(total)
        done = 0
        while done < total:
            remaining = total - done
            reserved = sum(cost for _, _, cost in specials)
            if specials and (specials[0][0] <= done or remaining <= reserved):
                _, kind, _ = specials.popleft()
                transactions = self._special(kind)
            else:
                size = min(self.rng.between(1, 4), remaining - reserved)
                transactions = [self._random_transaction(size, remaining - reserved)]
            for transaction in transactions:
                done += len(transaction.changes)
                yield transaction

    def _special_schedule(self, total: int) -> deque[tuple[int, str, int]]:
        """Positions (in streaming events) of the truncate and the primary-key changes."""
        schedule = [(int(total * _TRUNCATE_AT), "truncate", _TRUNCATE_COST)]
        for n in range(self.plan.pk_changes):
            at = int(total * (0.25 + 0.7 * n / self.plan.pk_changes))
            schedule.append((at, "pk_change", _PK_CHANGE_COST))
        return deque(sorted(schedule))

    def _tick(self) -> int:
        # Commit timestamps: one busy OLTP database, tens of ms to ~1.5 s between commits.
        self.ts_ms += self.rng.between(15, 1500)
        return self.ts_ms

    def _special(self, kind: str) -> list[Transaction]:
        ts_ms = self._tick()
        if kind == "truncate":
            truncate = Transaction(ts_ms, [self.db.truncate(ORDERS)])
            refill_ts = self._tick()
            refill = [self.db.create(ORDERS, refill_ts) for _ in range(2)]
            return [truncate, Transaction(refill_ts, refill)]
        table = self._pk_tables[self.db.pk_changes % len(self._pk_tables)]
        old_id = self.db.live[table.name].random_id(self.rng)
        return [Transaction(ts_ms, self.db.change_primary_key(table, old_id, ts_ms))]

    def _random_transaction(self, size: int, normal_left: int) -> Transaction:
        ts_ms = self._tick()
        changes: list[Change] = []
        touched: set[tuple[str, int]] = set()  # one event per row and transaction
        for slot in range(size):
            left = normal_left - slot
            create_share = self._creates_left / left if left > 0 else 0.0
            roll = self.rng.random()
            change: Change | None
            if roll < create_share:
                self._creates_left -= 1
                change = self.db.create(self._weighted(_CREATE_WEIGHTS), ts_ms)
            elif roll < create_share + _DELETE_SHARE:
                change = self._delete(touched) or self._update(touched, ts_ms)
            else:
                change = self._update(touched, ts_ms)
            if change is not None:
                touched.add((change.table.name, change.row_id or 0))
                changes.append(change)
        return Transaction(ts_ms, changes)

    def _weighted(self, weights: tuple[tuple[Table, float], ...]) -> Table:
        roll = self.rng.random()
        for table, weight in weights:
            roll -= weight
            if roll < 0:
                return table
        return weights[-1][0]

    def _pick(self, table: Table, touched: set[tuple[str, int]]) -> int | None:
        live = self.db.live[table.name]
        for _ in range(4):
            if not live:
                return None
            row_id = live.random_id(self.rng)
            if (table.name, row_id) not in touched:
                return row_id
        return None

    def _update(self, touched: set[tuple[str, int]], ts_ms: int) -> Change | None:
        first = self._weighted(_UPDATE_WEIGHTS)
        for table in _TRY_ORDER[first.name]:
            row_id = self._pick(table, touched)
            if row_id is not None:
                return self.db.update(table, row_id, ts_ms)
        return None

    def _delete(self, touched: set[tuple[str, int]]) -> Change | None:
        table = self._weighted(_CREATE_WEIGHTS)
        # Keep a few rows per table so updates, key changes and new orders always find some.
        if len(self.db.live[table.name]) <= 3:
            return None
        row_id = self._pick(table, touched)
        return self.db.delete(table, row_id) if row_id is not None else None


# --------------------------------------------------------------------------------------------
# The connector: positions, envelopes, transaction metadata
# --------------------------------------------------------------------------------------------


class Connector:
    """Turns changes into Debezium records: LSNs, txIds, sequence, envelopes, tombstones."""

    def __init__(self, rng: Dice, sink: Sink, stream_events: int) -> None:
        self.rng = rng
        self.sink = sink
        # Start just below a power of ten so that LSNs and txIds change digit count mid-stream:
        # consumers comparing positions as strings get caught.
        self.lsn = max(24_000_000, 100_000_000 - stream_events * 150)
        self.last_commit_lsn = self.lsn
        self.tx_id = max(500, 1000 - stream_events // 6)
        self._frames = {t.name: (Frame(key_schema(t)), Frame(envelope_schema(t))) for t in TABLES}
        self._tx_key_frame = Frame(_transaction_key_schema())
        self._tx_value_frame = Frame(_transaction_value_schema())
        self.ops = dict.fromkeys(("r", "c", "u", "d", "t"), 0)
        self.tombstones = 0
        self.transactions = 0
        self.transaction_records = 0

    def _emit_change(
        self,
        change: Change,
        source_ts: int,
        snapshot: str,
        sequence: str,
        envelope_ts: int,
        kafka_ts: int,
        block: dict[str, Any] | None,
    ) -> None:
        table = change.table
        key_frame, value_frame = self._frames[table.name]
        payload = {
            "before": change.before,
            "after": change.after,
            "source": {
                "version": DEBEZIUM_VERSION,
                "connector": "postgresql",
                "name": SERVER_NAME,
                "ts_ms": source_ts,
                "snapshot": snapshot,
                "db": DATABASE,
                "sequence": sequence,
                "schema": PG_SCHEMA,
                "table": table.name,
                "txId": self.tx_id,
                "lsn": self.lsn,
                "xmin": None,
            },
            "op": change.op,
            "ts_ms": envelope_ts,
            "transaction": block,
        }
        key = None if change.row_id is None else Message(key_frame, b'{"id":%d}' % change.row_id)
        value = Message(value_frame, dumps(payload))
        self.sink.emit(table.topic, key, value, kafka_ts, change.headers)
        self.ops[change.op] += 1
        if change.op == "d":
            # Tombstone right after the delete, same key (so same partition), same headers.
            self.sink.emit(table.topic, key, None, kafka_ts, change.headers)
            self.tombstones += 1

    def snapshot(self, changes: list[Change], start_ts_ms: int) -> None:
        """All snapshot reads share the snapshot's LSN and txId and carry no transaction."""
        between = self.rng.between
        self.tx_id += 1
        sequence = _compact([None, str(self.lsn)])
        last = len(changes) - 1
        for index, change in enumerate(changes):
            marker = "first" if index == 0 else "last" if index == last else "true"
            source_ts = start_ts_ms + index // _SNAPSHOT_ROWS_PER_MS
            envelope_ts = source_ts + between(1, 9)
            kafka_ts = envelope_ts + between(1, 6)
            self._emit_change(change, source_ts, marker, sequence, envelope_ts, kafka_ts, None)

    def transaction(self, transaction: Transaction) -> None:
        """BEGIN, the events at strictly increasing LSNs, END; source.ts_ms is the commit time."""
        # `lo + int(rnd() * n)` is `rng.between(lo, lo + n - 1)` inlined: this loop runs for
        # every event, and the call would be a tenth of its cost.
        rnd = self.rng.random
        self.tx_id += 1 + int(rnd() * 3)  # other databases use txIds in between
        self.lsn += 40 + int(rnd() * 361)
        tx_name = f"{self.tx_id}:{self.lsn}"
        tx_key = Message(self._tx_key_frame, b'{"id":"%s"}' % tx_name.encode())
        commit_ts = transaction.commit_ts_ms
        envelope_ts = commit_ts + 2 + int(rnd() * 29)
        begin = b'{"status":"BEGIN","id":"%s","event_count":null,"data_collections":null,"ts_ms":%d}'
        self._transaction_record(tx_key, begin % (tx_name.encode(), commit_ts), envelope_ts)
        per_collection: dict[str, int] = {}
        for total_order, change in enumerate(transaction.changes, start=1):
            if total_order > 1:
                self.lsn += 40 + int(rnd() * 361)
            collection = change.table.qualified
            order_in_collection = per_collection.get(collection, 0) + 1
            per_collection[collection] = order_in_collection
            block = {
                "id": tx_name,
                "total_order": total_order,
                "data_collection_order": order_in_collection,
            }
            sequence = f'["{self.last_commit_lsn}","{self.lsn}"]'
            envelope_ts += int(rnd() * 4)
            kafka_ts = envelope_ts + 1 + int(rnd() * 6)
            self._emit_change(change, commit_ts, "false", sequence, envelope_ts, kafka_ts, block)
        self.last_commit_lsn = self.lsn + 24 + int(rnd() * 97)
        self.lsn = self.last_commit_lsn
        end = {
            "status": "END",
            "id": tx_name,
            "event_count": len(transaction.changes),
            "data_collections": [
                {"data_collection": name, "event_count": count} for name, count in per_collection.items()
            ],
            "ts_ms": commit_ts,
        }
        self._transaction_record(tx_key, dumps(end), envelope_ts + 1)
        self.transactions += 1

    def _transaction_record(self, key: Message, payload: bytes, kafka_ts: int) -> None:
        # BEGIN and END share the key, hence the partition: they stay in order.
        self.sink.emit(TRANSACTION_TOPIC, key, Message(self._tx_value_frame, payload), kafka_ts)
        self.transaction_records += 1


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


@dataclass
class GenerationSummary:
    """What one `generate` call wrote."""

    out_dir: Path
    fmt: str
    events: int
    """Row-change events (`r`, `c`, `u`, `d`, `t`), snapshot included."""
    keys: int
    """Distinct rows over all tables (every id ever created)."""
    records: int
    """Kafka records written: events, tombstones and transaction metadata."""
    per_topic: dict[str, int]
    per_op: dict[str, int]
    tombstones: int
    transactions: int
    transaction_records: int
    toast_updates: int
    pk_changes: int
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        """The one-line summary the CLI prints."""
        ops = " ".join(f"{op}={self.per_op.get(op, 0)}" for op in ("r", "c", "u", "d", "t"))
        rate = self.events / self.seconds if self.seconds > 0 else 0.0
        return (
            f"wrote {self.events} events ({ops}; toast={self.toast_updates} "
            f"pk_changes={self.pk_changes}) over {self.keys} keys as {self.records} {self.fmt} "
            f"records ({self.tombstones} tombstones, {self.transaction_records} transaction "
            f"records) in {len(self.files)} files under {self.out_dir} "
            f"in {self.seconds:.1f}s ({rate:,.0f} events/s)"
        )


def generate(
    out_dir: Path,
    *,
    events: int,
    keys: int,
    seed: int = 7,
    partitions: int = 3,
    fmt: str = "kcat",
    lines_per_file: int = 50_000,
    expected_path: Path | None = None,
    overwrite: bool = False,
    other_sources: bool = False,
) -> GenerationSummary:
    """Write a Debezium PostgreSQL change stream under `out_dir` and return what was written.

    Layout: `<out_dir>/<topic>/part-<partition>-<NNNNN>.json` (kcat lines) or `.parquet`, at
    most `lines_per_file` records each, for the topics in `TOPICS`. `events` is the number of
    row-change events (snapshot included) and `keys` the number of distinct rows ever created;
    both are met exactly unless `keys` is close to `events`.

    With `expected_path`, also write the oracle: `{"inventory.customers": {"{\\"id\\":1001}":
    {row}, ...}, ...}`, every live row per table after the whole stream, decoded (dates
    `YYYY-MM-DD`, micro timestamps `YYYY-MM-DDTHH:MM:SS.ffffff`, decimals as exact strings).

    With `other_sources`, also write the demo's Qlik and MongoDB streams (kcat lines, see
    `cdc_dbt.generate_other_sources`), their final state in the oracle too.

    Existing part files of these topics under `out_dir` are an error unless `overwrite`, which
    deletes them first (stale files of a bigger earlier run would otherwise be read too).
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    if partitions < 1 or lines_per_file < 1:
        raise ValueError("partitions and lines_per_file must be positive")
    plan = Plan.for_size(events, keys)
    _prepare_out_dir(out_dir, overwrite)
    started = time.perf_counter()
    rng = Dice(seed)
    workload = Workload(rng, plan)
    sink = Sink(out_dir, fmt, partitions, lines_per_file)
    connector = Connector(rng, sink, plan.stream_events)
    try:
        connector.snapshot(*workload.snapshot())
        for transaction in workload.stream():
            connector.transaction(transaction)
    finally:
        sink.close()
    if expected_path is not None:
        state = oracle_state(workload.db)
        if other_sources:
            state |= write_other_sources(out_dir, seed)
        write_oracle(expected_path, state)
    elif other_sources:
        write_other_sources(out_dir, seed)
    per_topic = sink.records_per_topic()
    return GenerationSummary(
        out_dir=out_dir,
        fmt=fmt,
        events=sum(connector.ops.values()),
        keys=sum(live.next_id - live.table.first_id for live in workload.db.live.values()),
        records=sum(per_topic.values()),
        per_topic=per_topic,
        per_op=connector.ops,
        tombstones=connector.tombstones,
        transactions=connector.transactions,
        transaction_records=connector.transaction_records,
        toast_updates=workload.db.toast_updates,
        pk_changes=workload.db.pk_changes,
        files=sorted(sink.files),
        seconds=time.perf_counter() - started,
    )


def _prepare_out_dir(out_dir: Path, overwrite: bool) -> None:
    stale = [path for topic in TOPICS for path in sorted((out_dir / topic).glob("part-*"))]
    if stale and not overwrite:
        raise FileExistsError(f"{out_dir} already holds generated files (use overwrite)")
    for path in stale:
        path.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)


def oracle_state(db: Database) -> dict[str, dict[str, Row]]:
    """Every live row per table, decoded, under its canonical key."""
    return {
        table.qualified: {
            canonical_key(row_id): decoded_row(table, db.live[table.name].rows[row_id])
            for row_id in sorted(db.live[table.name].rows)
        }
        for table in TABLES
    }


def write_oracle(path: Path, state: dict[str, dict[str, Row]]) -> None:
    """The expected final state, one row per line so that diffs stay readable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("{")
        for table_number, (table, rows) in enumerate(state.items()):
            out.write(("," if table_number else "") + f"\n{_compact(table)}: {{")
            for row_number, (key, row) in enumerate(rows.items()):
                out.write(("," if row_number else "") + f"\n{_compact(key)}: {_compact(row)}")
            out.write("\n}")
        out.write("\n}\n")


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_dbt.generate",
        description="Generate a deterministic Debezium PostgreSQL CDC stream as landed files.",
    )
    parser.add_argument("--out", type=Path, required=True, help="landing directory to write")
    parser.add_argument("--events", type=int, help="row-change events (default 10000)")
    parser.add_argument("--keys", type=int, help="distinct rows (default events / 10)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--partitions", type=int, help="partitions per topic (default 3)")
    parser.add_argument("--format", choices=FORMATS, default="kcat", dest="fmt")
    parser.add_argument("--lines-per-file", type=int, default=50_000)
    parser.add_argument("--expected", type=Path, help="write the oracle (final state) here")
    parser.add_argument("--overwrite", action="store_true", help="replace earlier output")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="the bundled demo: 400 events, 120 keys, 2 partitions, and the Qlik and MongoDB streams",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    preset = DEMO_PRESET if args.demo else {"events": 10_000, "partitions": 3}
    events = args.events if args.events is not None else preset["events"]
    keys = args.keys if args.keys is not None else preset.get("keys", max(MIN_KEYS, events // 10))
    partitions = args.partitions if args.partitions is not None else preset["partitions"]
    try:
        summary = generate(
            args.out,
            events=events,
            keys=keys,
            seed=args.seed,
            partitions=partitions,
            fmt=args.fmt,
            lines_per_file=args.lines_per_file,
            expected_path=args.expected,
            overwrite=args.overwrite,
            other_sources=args.demo,
        )
    except (ValueError, FileExistsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(summary.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
