"""The job a Spark engineer would write by hand instead of cdc-dbt, for the generator's PostgreSQL stream.

    python bench/native_baseline.py --landing DIR --output DIR [--with-schema] [--driver-memory 4g]
        [--shuffle-partitions 8]

Reads what `generator` lands (Debezium PostgreSQL change events of the `inventory` tables
as `kcat -C -J` lines, one folder per topic) and writes the two tables cdc-dbt builds, as Parquet:
`--output/history` (SCD2, one row per version) and `--output/current` (SCD1, one row per live
row). Only Spark's own functions: no Python UDF, so no Python worker ever starts. Per table:

1. `spark.read.text` of its topic's folder, `from_json` of each kcat line with an explicit schema
   of the record (topic, partition, offset, key, payload as text), then `from_json` of the payload
   with the Debezium envelope's explicit schema: the table's columns as the converter writes them,
   hard-coded here as an engineer knows their source tables. `--with-schema`: every message is
   JsonConverter's `{"schema": ..., "payload": {...}}` (key too); without it, the bare payload.
   Tombstones (null payload) have no op and are left out, as cdc-dbt ignores them by default: the
   delete before each carried the change. No filter sits right above a `from_json`: Spark 4.1 would
   push it below and parse each payload twice; the events are persisted, then filtered.
2. `row_key`: `to_json` of the Kafka key's payload, `{"id":1001}`, the text cdc-dbt writes
   (`udfs/keys.py`: the key's columns, sorted, no spaces; each table's key here is `id` alone).
   The before image is not read: like cdc-dbt, a delete takes its key from the Kafka key.
3. The source position: `(source.lsn, the numbers of source.sequence)`, compared as numbers, a
   missing or null sequence number as 0, then Kafka `(partition, offset)` to break ties, as
   `udfs/positions.py` and `int_row_events_versioned` order a key's events.
4. Dedup on (source_db, source_table, row_key, source position, op), after one shuffle by key,
   which the windows then reuse.
5. One window over each key's events in that order: a TOAST placeholder
   (`__debezium_unavailable_value`, or its base64 in a bytes column) in a text column takes the
   value the key's previous row had, i.e. its last known value since the key's last delete (with
   none, the placeholder stays), as `udfs/row_images.py` folds it; `valid_from` is the earliest
   `source.ts_ms` from the event on; the version number counts c/r/u events. A second window over
   the same order: `lead()` of op, position and start time.
6. A version per c/r/u event, ended by the key's next event (`d` by a delete, else `u`), or
   first by its table's next truncate after it (`t`): truncates are joined, broadcast, by table.
7. The row JSON: `to_json` of the table's columns, nulls kept. With `--with-schema`, logical types
   are decoded as cdc-dbt's row JSON has them: `io.debezium.time.Date` as `YYYY-MM-DD`,
   `MicroTimestamp` as `YYYY-MM-DDTHH:MM:SS.ffffff`, Connect `Decimal` (base64 two's complement,
   up to 7 bytes here) as exact text with its scale (`"12.50"`). Without the schema, values stay
   as the source wrote them, as in cdc-dbt.
8. History written as Parquet; current read back from it (its versions not ended) and written.

What it leaves out, which cdc-dbt does: other connectors and formats, the Kafka-position fallback
for events without an LSN, quarantine of bad records, tombstones as deletes (cdc-dbt's default
ignores them too), transaction metadata, and incremental builds: every run reads everything.
"""

import argparse
import base64
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window, WindowSpec
from pyspark.storagelevel import StorageLevel

UNAVAILABLE = "__debezium_unavailable_value"
"""Debezium's placeholder for an unchanged TOAST value it could not read."""
UNAVAILABLE_BASE64 = base64.b64encode(UNAVAILABLE.encode()).decode()
"""The same placeholder in a bytes column, as JsonConverter writes bytes (base64)."""

DATE = "io.debezium.time.Date"
MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
DECIMAL = "org.apache.kafka.connect.data.Decimal"


@dataclass(frozen=True)
class SourceColumn:
    """A column of a source table: its Spark type as the converter writes it, and its logical type."""

    name: str
    wire_type: str
    logical: str | None = None
    scale: int = 0


@dataclass(frozen=True)
class SourceTable:
    """A source table: its topic, its columns in order, its primary key."""

    topic: str
    columns: tuple[SourceColumn, ...]
    key: tuple[str, ...] = ("id",)


TABLES = (
    SourceTable(
        "dbserver1.inventory.customers",
        (
            SourceColumn("id", "int"),
            SourceColumn("first_name", "string"),
            SourceColumn("last_name", "string"),
            SourceColumn("email", "string"),
            SourceColumn("updated_at", "bigint", MICRO_TIMESTAMP),
        ),
    ),
    SourceTable(
        "dbserver1.inventory.products",
        (
            SourceColumn("id", "int"),
            SourceColumn("name", "string"),
            SourceColumn("description", "string"),
            SourceColumn("weight", "double"),
            SourceColumn("price", "string", DECIMAL, scale=2),  # numeric(10, 2): base64 bytes on the wire
        ),
    ),
    SourceTable(
        "dbserver1.inventory.orders",
        (
            SourceColumn("id", "int"),
            SourceColumn("order_date", "int", DATE),
            SourceColumn("purchaser", "int"),
            SourceColumn("quantity", "int"),
            SourceColumn("product_id", "int"),
        ),
    ),
)

KEY = ("source_db", "source_table", "row_key")
"""A row's identity, as cdc-dbt's."""
EVENT_ORDER = ("source_position", "partition", "offset")
"""A key's events in source order; Kafka's position only breaks ties."""
CURRENT_COLUMNS = (
    "source_db", "source_table", "row_key", "row", "op", "source_ts", "version", "source_position", "topic",
    "partition", "offset",
)  # fmt: skip


def struct_type(fields: Iterable[tuple[str, str]]) -> str:
    """A Spark DDL struct type; every name quoted, so that `partition` or `table` parse as names."""
    return "struct<" + ", ".join(f"`{name}`: {kind}" for name, kind in fields) + ">"


KCAT_RECORD_TYPE = struct_type(
    [("topic", "string"), ("partition", "int"), ("offset", "bigint"), ("key", "string"), ("payload", "string")]
)
"""What the job reads of a kcat line; key and payload stay text, to be read with their own schemas."""
SOURCE_TYPE = struct_type(
    [
        ("db", "string"),
        ("schema", "string"),
        ("table", "string"),
        ("ts_ms", "bigint"),
        ("lsn", "bigint"),
        ("sequence", "string"),
    ]
)


def converter_message(inner: str, with_schema: bool) -> str:
    """A message's type: with the converter's schema, its payload is one field beside the schema."""
    return struct_type([("payload", inner)]) if with_schema else inner


def envelope_type(table: SourceTable, with_schema: bool) -> str:
    """The Debezium envelope of a table's change events, as much of it as the job uses."""
    row = struct_type((column.name, column.wire_type) for column in table.columns)
    envelope = struct_type([("after", row), ("source", SOURCE_TYPE), ("op", "string"), ("ts_ms", "bigint")])
    return converter_message(envelope, with_schema)


def key_type(table: SourceTable, with_schema: bool) -> str:
    """The Kafka key: the primary key's columns, sorted by name as cdc-dbt's canonical `row_key` is."""
    types = {column.name: column.wire_type for column in table.columns}
    return converter_message(struct_type((name, types[name]) for name in sorted(table.key)), with_schema)


def sequence_number(sequence: Column, index: int) -> Column:
    """The `index`-th number (from 1) of `source.sequence`; a missing or null one is 0, as in cdc-dbt."""
    return F.coalesce(F.try_element_at(sequence, F.lit(index)).try_cast("bigint"), F.lit(0).cast("bigint"))


def read_events(spark: SparkSession, landing: Path, table: SourceTable, with_schema: bool) -> DataFrame:
    """The table's records: identity, op, position, time, after image, Kafka coordinates (a tombstone's op is null)."""
    records = (
        spark.read.text(str(landing / table.topic))
        .select(F.from_json("value", KCAT_RECORD_TYPE).alias("record"))
        .select("record.*")
    )
    envelope = F.from_json("payload", envelope_type(table, with_schema))
    key = F.from_json("key", key_type(table, with_schema))
    if with_schema:
        envelope, key = envelope.getField("payload"), key.getField("payload")
    sequence = F.from_json("envelope.source.sequence", "array<string>")
    return records.select(envelope.alias("envelope"), key.alias("key"), "topic", "partition", "offset").select(
        F.col("envelope.source.db").alias("source_db"),
        F.concat(F.coalesce("envelope.source.schema", "envelope.source.db"), F.lit("."), "envelope.source.table").alias(
            "source_table"
        ),
        F.to_json("key").alias("row_key"),
        F.col("envelope.op").alias("op"),
        F.struct(
            F.col("envelope.source.lsn").alias("lsn"),
            sequence_number(sequence, 1).alias("sequence_1"),
            sequence_number(sequence, 2).alias("sequence_2"),
        ).alias("source_position"),
        F.timestamp_millis(F.coalesce("envelope.source.ts_ms", "envelope.ts_ms")).alias("source_ts"),
        F.col("envelope.after").alias("after"),
        "topic",
        "partition",
        "offset",
    )


def row_events(events: DataFrame) -> DataFrame:
    """The row changes (c, r, u, d), each source event once, shuffled by key for the windows."""
    return (
        events.where(F.col("op").isin("c", "r", "u", "d") & F.col("row_key").isNotNull())
        .repartition(*KEY)
        .dropDuplicates([*KEY, "source_position", "op"])
    )


def truncates_by_table(events: DataFrame) -> DataFrame:
    """Each table's truncates (few): their positions and times, one array per table."""
    return (
        events.where(F.col("op") == "t")
        .groupBy("source_db", "source_table")
        .agg(
            F.collect_list(F.struct(F.col("source_position").alias("position"), F.col("source_ts").alias("ts"))).alias(
                "truncates"
            )
        )
    )


def is_unavailable(value: Column) -> Column:
    """Whether a text value is the TOAST placeholder; never null."""
    return F.coalesce(value.isin(UNAVAILABLE, UNAVAILABLE_BASE64), F.lit(False))


def last_known(value: Column) -> Column:
    """Aggregated over a key's events so far: the last delete, or the last event that knew `value`."""
    return F.last(
        F.when(
            F.col("op") == "d", F.struct(F.lit(True).alias("deleted"), F.lit(None).cast("string").alias("value"))
        ).when(~is_unavailable(value), F.struct(F.lit(False).alias("deleted"), value.alias("value"))),
        ignorenulls=True,
    )


def resolved(value: Column, known: Column) -> Column:
    """A placeholder takes the last known value since the key's last delete; with none, it stays."""
    return F.when(
        is_unavailable(value) & known.isNotNull() & ~known.getField("deleted"), known.getField("value")
    ).otherwise(value)


def connect_decimal_text(value: Column, scale: int) -> Column:
    """Connect `Decimal` (base64 of a big-endian two's-complement integer, up to 7 bytes) as exact text."""
    hex_digits = F.hex(F.unbase64(value))
    unsigned = F.conv(hex_digits, 16, 10).cast("bigint")
    modulus = F.pow(F.lit(2.0), F.length(hex_digits) * 4).cast("bigint")
    unscaled = F.when(F.substring(hex_digits, 1, 1) >= F.lit("8"), unsigned - modulus).otherwise(unsigned)
    digits = F.format_string(f"%0{scale + 1}d", F.abs(unscaled))
    text = F.regexp_replace(digits, f"([0-9]{{{scale}}})$", ".$1") if scale > 0 else digits
    return F.concat(F.when(unscaled < 0, F.lit("-")).otherwise(F.lit("")), text)


def decoded(column: SourceColumn, value: Column, with_schema: bool) -> Column:
    """A value as cdc-dbt's row JSON holds it: decoded by its logical type when the schema says it."""
    if not with_schema or column.logical is None:
        return value
    if column.logical == DATE:
        return F.date_from_unix_date(value).cast("string")
    if column.logical == MICRO_TIMESTAMP:
        return F.date_format(F.timestamp_micros(value), "yyyy-MM-dd'T'HH:mm:ss.SSSSSS")
    if column.logical == DECIMAL:
        # A placeholder left in place (no earlier value) is no number: kept as it is.
        return F.when(is_unavailable(value), value).otherwise(connect_decimal_text(value, column.scale))
    raise ValueError(f"no decoding for {column.logical}")


def versions(events: DataFrame, table: SourceTable, with_schema: bool) -> DataFrame:
    """The table's history: a version per c/r/u event, ended by the key's next event or a truncate."""
    key_order: WindowSpec = Window.partitionBy(*KEY).orderBy(*EVENT_ORDER)
    so_far = key_order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    from_here = key_order.rowsBetween(Window.currentRow, Window.unboundedFollowing)
    text_columns = [column for column in table.columns if column.wire_type == "string"]
    is_version = F.col("op") != "d"

    windowed = row_events(events).select(
        "*",
        *(
            last_known(F.col("after").getField(column.name)).over(so_far).alias(f"known_{column.name}")
            for column in text_columns
        ),
        F.min("source_ts").over(from_here).alias("starts_at"),
        F.sum(F.when(is_version, 1).otherwise(0)).over(so_far).cast("int").alias("version"),
    )
    with_next = windowed.select(
        "*",
        F.lead("op").over(key_order).alias("next_op"),
        F.lead("source_position").over(key_order).alias("next_position"),
        F.lead("starts_at").over(key_order).alias("next_starts_at"),
    )

    def row_value(column: SourceColumn) -> Column:
        value = F.col("after").getField(column.name)
        if column.wire_type == "string":
            value = resolved(value, F.col(f"known_{column.name}"))
        return decoded(column, value, with_schema).alias(column.name)

    row = F.to_json(F.struct(*(row_value(column) for column in table.columns)), {"ignoreNullFields": "false"})
    later_truncates = F.filter("truncates", lambda truncate: truncate["position"] > F.col("source_position"))
    started = (
        with_next.where(is_version)
        .join(F.broadcast(truncates_by_table(events)), ["source_db", "source_table"], "left")
        .select("*", row.alias("row"), F.array_min(later_truncates).alias("first_truncate"))
    )
    truncate_first = F.col("first_truncate").isNotNull() & (
        F.col("next_position").isNull() | (F.col("first_truncate.position") < F.col("next_position"))
    )
    ended_by = (
        F.when(truncate_first, F.lit("t"))
        .when(F.col("next_op") == "d", F.lit("d"))
        .when(F.col("next_op").isNotNull(), F.lit("u"))
    )
    valid_to = F.when(
        truncate_first, F.greatest("starts_at", F.least("first_truncate.ts", "next_starts_at"))
    ).otherwise(F.col("next_starts_at"))
    return started.select(
        *KEY,
        "row",
        "op",
        "version",
        F.col("starts_at").alias("valid_from"),
        valid_to.alias("valid_to"),
        ended_by.isNull().alias("is_current"),
        ended_by.alias("ended_by"),
        "source_position",
        "topic",
        "partition",
        "offset",
    )


def start_spark(driver_memory: str | None, shuffle_partitions: int) -> SparkSession:
    """A local session on every core, with the settings cdc-dbt's embedded Spark uses."""
    builder = (
        SparkSession.builder.appName("native baseline")
        .master("local[*]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run(spark: SparkSession, landing: Path, output: Path, with_schema: bool) -> tuple[int, int]:
    """Write history, then current from it; return their row counts."""
    tables = [table for table in TABLES if (landing / table.topic).is_dir()]
    if not tables:
        raise SystemExit(f"no topic folder of {[table.topic for table in TABLES]} under {landing}")
    events = {
        table.topic: read_events(spark, landing, table, with_schema).persist(StorageLevel.MEMORY_AND_DISK)
        for table in tables
    }
    history = reduce(DataFrame.unionByName, (versions(events[table.topic], table, with_schema) for table in tables))
    history.write.mode("overwrite").parquet(str(output / "history"))
    for cached in events.values():
        cached.unpersist()
    written = spark.read.parquet(str(output / "history"))
    current = written.where("is_current").withColumnRenamed("valid_from", "source_ts").select(*CURRENT_COLUMNS)
    current.write.mode("overwrite").parquet(str(output / "current"))
    return written.count(), spark.read.parquet(str(output / "current")).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--landing", type=Path, required=True, help="the generator's landing (one folder per topic)")
    parser.add_argument("--output", type=Path, required=True, help="history/ and current/ are written here")
    parser.add_argument("--with-schema", action="store_true", help="messages carry JsonConverter's schema")
    parser.add_argument("--driver-memory", help="spark.driver.memory (local mode: all the heap there is)")
    parser.add_argument(
        "--shuffle-partitions", type=int, default=int(os.environ.get("CDC_SHUFFLE_PARTITIONS", "8")),
        help="spark.sql.shuffle.partitions (default: CDC_SHUFFLE_PARTITIONS or 8, as cdc-dbt)",
    )  # fmt: skip
    arguments = parser.parse_args()

    started = time.perf_counter()
    spark = start_spark(arguments.driver_memory, arguments.shuffle_partitions)
    session_seconds = time.perf_counter() - started
    history_rows, current_rows = run(spark, arguments.landing, arguments.output, arguments.with_schema)
    job_seconds = time.perf_counter() - started - session_seconds
    spark.stop()
    form = "with" if arguments.with_schema else "without"
    print(
        f"native baseline ({form} the converter schema): {history_rows:,} history rows, {current_rows:,} current rows;"
        f" session start {session_seconds:.1f} s, job {job_seconds:.1f} s, in all {session_seconds + job_seconds:.1f} s"
    )


if __name__ == "__main__":
    main()
