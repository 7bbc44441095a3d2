"""The simulated PostgreSQL `inventory` schema as Debezium's connector `dbserver1` sees it.

Its names (server, topics, headers), the tables and their Kafka Connect field schemas, and
the two encodings of a row: on the wire (`wire_row`) and as consumers must present it
(`decoded_row`, the oracle's). The simulated database (`scenario`) and the connector
(`postgres`) both build on it.
"""

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

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

_EPOCH_DATE = date(1970, 1, 1)
_EPOCH_DATETIME = datetime(1970, 1, 1)  # MicroTimestamp has no zone: naive on purpose

# --------------------------------------------------------------------------------------------
# Tables (their columns' schemas exactly as JsonConverter renders Debezium's Connect schemas)
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
