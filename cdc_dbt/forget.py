"""`cdc-dbt forget`: erase rows' every trace from the warehouse, and withhold them from every
later build.

usage:
  cdc-dbt forget <source_table> '<row_key JSON>' ['<row_key JSON>' ...] [--source-db DB] [--target-path PATH]

  <source_table>   as cdc_current.source_table names it, e.g. inventory.customers
  <row_key JSON>   a row's key columns as a JSON object, e.g. '{"id": 1004}' (any spacing or
                   order of the columns: it is compared as cdc_current.row_key writes it); name
                   several rows of the table to forget them in one pass (a batch of requests),
                   or `-` to read them from standard input, one JSON object a line
  --source-db DB   the source database, when two databases have a table of that name
  --target-path P  where the last build wrote dbt's manifest (default: ./target, or DBT_TARGET_PATH),
                   to find the typed marts kept as tables

It deletes the rows' records and rows from the tables a build keeps (the deliveries and their
payloads, the parsed records, the row-state tables, cdc_current, cdc_history, typed marts kept as
tables; cdc_changes, cdc_quarantine and the other views follow), purges them from the Delta
tables' files (time travel before the forget no longer reaches them), and appends to the erasure
list `cdc_erasures` the records' identities and the fingerprints of their Kafka keys, which every
later build, `--full-refresh` included, withholds before parsing. It prints each row's erasure id,
the rows it removed per table and the landed files that still hold the raw bytes: rewrite or
expire them. Every key is checked before anything is erased: one mistake, and nothing is.
See docs/commands.md#forgetting-a-row-cdc-dbt-forget.
"""

import argparse
import datetime as dt
import hashlib
import json
import os
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import unquote, urlparse

from cdc_dbt.settings import INSTALLED_PROJECT_DIR, Settings, table_format_mistake
from udfs.keys import row_key_from_kafka_key

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

USAGE = __doc__ or ""

ERASURES = "cdc_erasures"
"""The erasure list (macros/erasure/create_erasure_list.sql creates it; this command appends to it)."""
PARSED = "int_records_parsed"
"""Every landed record once, with its outcome and, for a change, its row's identity."""
DELIVERIES = "int_deliveries_loaded"
TABLES_BY_RECORD = (
    DELIVERIES,
    "int_transaction_records",
    "int_qlik_records_bound",
    "int_avro_records_retried",
    "int_records_parsed_unbound",
)
"""The tables holding landed records, erased by the records' identities (topic, partition,
offset). In this order: int_records_parsed (the last three) is what finds the row, so a forget
stopped half-way finds it again when run again."""
TABLES_BY_ROW = ("cdc_current", "cdc_history", "int_row_events_versioned", "int_row_events_sequenced")
"""The row-state tables, erased by the row's identity (source_db, source_table, row_key); on
Parquet cdc_current and cdc_history are views (and forget refuses Parquet)."""
VIEWS_BY_RECORD = ("cdc_changes", "cdc_quarantine")
"""Views over the records, counted before the erasure: what a consumer sees go."""
FORGET_COMMIT = "cdc-dbt forget"
"""The user metadata of the Delta commits that erase rows (`erase`), which `purge` looks for."""
COMMIT_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
TEMPORARY_RECORDS = "cdc_forget_records"
TEMPORARY_ROW = "cdc_forget_row"
ON_RECORD = (
    "target.topic = erased.topic and target.`partition` = erased.`partition` and target.`offset` = erased.`offset`"
)
ON_ROW = (
    "target.source_db <=> erased.source_db and target.source_table = erased.source_table"
    " and target.row_key = erased.row_key"
)
ON_MART_ROW = "target.source_db <=> erased.source_db and target.row_key = erased.row_key"
"""A typed mart holds one source table's rows: its source database and key name one."""
MANIFEST_MATERIALIZATIONS = ("table", "incremental")
KCAT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt", ".json.gz", ".jsonl.gz", ".ndjson.gz", ".parquet")
"""The landed files a build reads (macros/landing/create_landing_tables.sql)."""


class ForgetError(Exception):
    """A mistake of the user's (a source table or key the warehouse does not have): one line, exit 2."""


@dataclass(frozen=True)
class ForgetRequest:
    source_table: str
    row_keys: tuple[str, ...]
    """The keys of the rows, each as cdc_current.row_key writes it (canonical JSON), in the order
    named, each once."""
    source_db: str | None = None
    target_path: Path | None = None


@dataclass(frozen=True)
class Erasure:
    """One row forgotten: its erasure id in the erasure list, its source database and key."""

    erasure_id: str
    source_db: str | None
    row_key: str

    def named(self, source_table: str) -> str:
        database = "no source database" if self.source_db is None else f"source database {self.source_db}"
        return f"{source_table} {self.row_key} ({database}), erasure {self.erasure_id}"


@dataclass
class ForgetReport:
    source_table: str
    erasures: list[Erasure]
    removed: list[tuple[str, int]] = field(default_factory=list)
    """(table, rows) for every table and view that held some, in the order erased; views end in ` (view)`."""
    landed_files: list[str] = field(default_factory=list)
    withheld_records: int = 0
    withheld_kafka_keys: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        width = max((len(table) for table, _ in self.removed), default=0)
        erased = [f"cdc-dbt forget: erased {erasure.named(self.source_table)}" for erasure in self.erasures]
        several = len(erased) > 1
        # One row's removals follow its line; several rows' are summed (one MERGE per table erased them).
        heading = (
            [*erased, f"cdc-dbt forget: removed, the {len(erased)} rows together:"] if several else [f"{erased[0]}:"]
        )
        return [
            *heading,
            *(f"  {table:<{width}}  {rows} row{'' if rows == 1 else 's'} removed" for table, rows in self.removed),
            f"cdc-dbt forget: withheld from every later build, --full-refresh included: {self.withheld_records}"
            f" landed record{'' if self.withheld_records == 1 else 's'} by identity and {self.withheld_kafka_keys}"
            f" Kafka key{'' if self.withheld_kafka_keys == 1 else 's'} by fingerprint ({ERASURES})",
            *(f"cdc-dbt forget: {note}" for note in self.notes),
            f"cdc-dbt forget: the landed files that still hold {'their' if several else 'its'} raw bytes"
            " (rewrite or expire them):",
            *(f"  {path}" for path in self.landed_files),
        ]


def kafka_key_fingerprint(topic: str, key: str) -> str:
    """SHA-256 (hex) of the topic, a NUL and the Kafka key's text: the fingerprint the erasure
    list keeps instead of the key, and the build computes alike (`cdc_kafka_key_fingerprint`)."""
    return hashlib.sha256(f"{topic}\0{key}".encode()).hexdigest()


class _ArgumentParser(argparse.ArgumentParser):
    """argparse's mistakes as ForgetError (one line), not its usage and exit."""

    def error(self, message: str) -> NoReturn:
        raise ForgetError(f"{message}: cdc-dbt forget <source_table> '<row_key JSON>' (--help)")


def parse_request(args: Sequence[str], stdin: Iterable[str] = ()) -> ForgetRequest:
    """The arguments, or ForgetError saying what is wrong with them; the keys are read from the
    lines of `stdin` when the one key named is `-`."""
    parser = _ArgumentParser(prog="cdc-dbt forget", add_help=False)
    parser.add_argument("source_table")
    parser.add_argument("row_keys", nargs="+", metavar="row_key")
    parser.add_argument("--source-db")
    parser.add_argument("--target-path", type=Path)
    parsed, unknown = parser.parse_known_args(list(args))
    if unknown:
        raise ForgetError(f"unexpected {' '.join(unknown)}: cdc-dbt forget <source_table> '<row_key JSON>' (--help)")
    if not parsed.source_table.strip():
        raise ForgetError("the source table is empty: name it as cdc_current.source_table does")
    typed_keys = [(typed, "") for typed in parsed.row_keys]
    if parsed.row_keys == ["-"]:
        typed_keys = [
            (line.strip(), f" (line {number} of standard input)")
            for number, line in enumerate(stdin, start=1)
            if line.strip()
        ]
        if not typed_keys:
            raise ForgetError("no key on standard input: one row key, a JSON object, a line")
    row_keys = []
    for typed, where in typed_keys:
        row_key = row_key_from_kafka_key(typed)
        if row_key is None:
            raise ForgetError(
                f"the key {typed!r}{where} is not a JSON object of the row's key columns,"
                " e.g. '{\"id\": 1004}' (as cdc_current.row_key shows it)"
            )
        row_keys.append(row_key)
    # A key named twice (a batch of requests often repeats one) is one row to forget.
    return ForgetRequest(parsed.source_table, tuple(dict.fromkeys(row_keys)), parsed.source_db, parsed.target_path)


def main(args: Sequence[str], settings: Settings) -> int:
    """`cdc-dbt forget ...`: mistakes in the arguments or settings exit 2 before any JVM starts."""
    if not args or args[0] in ("-h", "--help"):
        print(USAGE.strip(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    from cdc_dbt.cli import run_at_boundary

    try:
        request = parse_request(args, sys.stdin)
    except ForgetError as error:
        print(f"cdc-dbt forget: {error}", file=sys.stderr)
        return 2
    mistake = table_format_mistake(settings) or unsupported_format(settings) or missing_warehouse(settings)
    if mistake:
        print(f"cdc-dbt forget: {mistake}", file=sys.stderr)
        return 2
    return run_at_boundary(lambda: forget_and_report(settings, request), "cdc-dbt forget", mistakes=(ForgetError,))


def forget_and_report(settings: Settings, request: ForgetRequest) -> int:
    """Hold the warehouse, erase the row in a SparkSession, and print what was erased and withheld."""
    from cdc_dbt.session import build_session
    from cdc_dbt.warehouse_lock import hold_warehouse

    _lock = hold_warehouse(settings.warehouse_dir, "forget")
    spark = build_session(settings)
    report = forget(spark, settings, request)
    print("\n".join(report.lines()))
    return 0


UNSUPPORTED_FORMAT_REASONS = {
    "parquet": "Parquet has no DELETE, and a rewrite of every table would not be atomic",
    "iceberg": "its purge of the files that still hold the rows is Delta's VACUUM, not built for Iceberg yet",
}


def unsupported_format(settings: Settings) -> str | None:
    """Parquet has no DELETE: forget refuses it rather than rewrite every table half-way; on
    Iceberg the erasure could be made, but not the purge that makes it final."""
    if settings.table_format == "delta":
        return None
    return (
        f"forget needs Delta tables (CDC_TABLE_FORMAT=delta) and this warehouse is {settings.table_format}:"
        f" {UNSUPPORTED_FORMAT_REASONS[settings.table_format]}. Rebuild the warehouse"
        " in Delta (cdc-dbt build --full-refresh with CDC_TABLE_FORMAT=delta), then forget"
    )


def missing_warehouse(settings: Settings) -> str | None:
    if settings.was_built:
        return None
    return f"no warehouse at {settings.warehouse_dir} (CDC_WAREHOUSE_DIR): nothing was built there to forget"


def quoted(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


RECORD_COLUMNS = (
    "topic", "partition", "offset", "key", "outcome", "source_db", "source_table", "row_key", "source_format",
    "transaction_id", "source_position", "op", "source_ts", "transaction_total_order", "transaction_event_count",
)  # fmt: skip
"""What forget reads of a parsed record: its identity, Kafka key, row and place in its transaction."""
TRANSACTION_COLUMNS = RECORD_COLUMNS[8:]
"""What the erasure list keeps of an erased change in a source transaction (for cdc_transactions)."""
NO_TRANSACTION = (None,) * len(TRANSACTION_COLUMNS)


def forget(spark: "SparkSession", settings: Settings, request: ForgetRequest) -> ForgetReport:
    """Erase the rows `request` names from the warehouse of `spark` (schema `settings.schema`) and
    add them to the erasure list; raise ForgetError, before anything is erased, when the warehouse
    has no such row for one of the keys.

    The rows' records are found and collected first (a few queries, whatever the number of rows:
    they are few), then each table is erased in one MERGE, then the tables' files are purged."""
    from pyspark.sql import functions as F

    from cdc_dbt.recovery import catalog_tables
    from cdc_dbt.up_to_date import forget_last_build

    schema = settings.schema

    def name(table: str) -> str:
        return f"{quoted(schema)}.{quoted(table)}"

    held = {} if not spark.catalog.databaseExists(schema) else catalog_tables(spark, schema)
    if PARSED not in held or DELIVERIES not in held:
        raise ForgetError(f"the schema {schema} (CDC_SCHEMA) holds no build: run `cdc-dbt build` first")
    if ERASURES not in held:
        raise ForgetError(
            f"the schema {schema} was built by an earlier cdc-dbt, without an erasure list:"
            " run `cdc-dbt build` once with this one, then forget"
        )
    parsed = spark.table(name(PARSED))
    deliveries = spark.table(name(DELIVERIES))
    named_keys = spark.createDataFrame([(row_key,) for row_key in request.row_keys], "row_key string")
    of_keys = [
        record.asDict()
        for record in parsed.where(F.col("source_table") == F.lit(request.source_table))
        .join(named_keys, "row_key", "left_semi")
        .select(*RECORD_COLUMNS)
        .collect()
    ]
    # Grouped once: a batch of thousands of keys must not scan every record once per key.
    of_each_key: dict[str, list[dict[str, Any]]] = {row_key: [] for row_key in request.row_keys}
    for record in of_keys:
        of_each_key[record["row_key"]].append(record)
    erasures = [
        Erasure(uuid.uuid4().hex, row_database(parsed, request, row_key, of_key), row_key)
        for row_key, of_key in of_each_key.items()
    ]
    rows = {(erasure.source_db, request.source_table, erasure.row_key): erasure for erasure in erasures}
    of_rows = [record for record in of_keys if row_of(record) in rows]
    # Every record of the topics carrying one of the rows' Kafka keys: their tombstones (no table,
    # only the key), their quarantined records, and any record of another row with that key.
    row_keys = sorted({(record["topic"], record["key"]) for record in of_rows if record["topic"] and record["key"]})
    keys_frame = spark.createDataFrame(row_keys, "topic string, key string")
    with_keys = [
        record.asDict()
        for record in parsed.join(keys_frame, ["topic", "key"], "left_semi").select(*RECORD_COLUMNS).collect()
    ]
    shared = {
        (record["topic"], record["key"])
        for record in with_keys
        if record["source_table"] is not None and row_of(record) not in rows
    }
    own_keys = [key for key in row_keys if key not in shared]
    is_own_key = set(own_keys)
    records = {
        (record["topic"], record["partition"], record["offset"]): record
        for record in [*of_rows, *(record for record in with_keys if (record["topic"], record["key"]) in is_own_key)]
        if record["partition"] is not None and record["offset"] is not None
    }
    own_keys_frame = spark.createDataFrame(own_keys, "topic string, key string")
    records_frame = spark.createDataFrame(list(records), "topic string, `partition` int, `offset` bigint")
    delivered = deliveries.join(records_frame, ["topic", "partition", "offset"], "left_semi").unionByName(
        deliveries.join(own_keys_frame, ["topic", "key"], "left_semi")
    )
    landed = [
        entry.asDict()
        for entry in delivered.select("topic", "partition", "offset", "key", "landed_file").distinct().collect()
    ]
    for entry in landed:  # a delivery of a row's key whose record another file delivered first
        records.setdefault(
            (entry["topic"], entry["partition"], entry["offset"]), {"topic": entry["topic"], "key": entry["key"]}
        )
    records_frame = spark.createDataFrame(list(records), "topic string, `partition` int, `offset` bigint")
    records_frame.createOrReplaceTempView(TEMPORARY_RECORDS)
    spark.createDataFrame(list(rows), "source_db string, source_table string, row_key string").createOrReplaceTempView(
        TEMPORARY_ROW
    )

    report = ForgetReport(request.source_table, erasures)
    report.landed_files = sorted({shown_file(entry["landed_file"]) for entry in landed})
    unbuilt = unbuilt_files(settings.landing_dir, deliveries)
    append_erasures(spark, name(ERASURES), request.source_table, erasure_of(rows, of_rows), records, own_keys)
    report.withheld_records, report.withheld_kafka_keys = len(records), len(own_keys)
    outcomes = Counter(record.get("outcome") for record in records.values())
    for view, outcome in (("cdc_changes", "change"), ("cdc_quarantine", "quarantine")):
        if outcomes[outcome]:
            report.removed.append((f"{view} (view)", outcomes[outcome]))

    marts, note = typed_mart_tables(settings, request)
    if note:
        report.notes.append(note)
    erasing = [
        *((mart, TEMPORARY_ROW, ON_MART_ROW) for mart in marts),
        *((table, TEMPORARY_ROW, ON_ROW) for table in TABLES_BY_ROW),
        *((table, TEMPORARY_RECORDS, ON_RECORD) for table in TABLES_BY_RECORD),
    ]
    tables = []
    for table, source, condition in erasing:
        if held.get(table, "VIEW") == "VIEW":
            continue
        tables.append(name(table))
        count = erase(spark, name(table), source, condition)
        if count:
            report.removed.append((table, count))
    spark.catalog.dropTempView(TEMPORARY_RECORDS)
    spark.catalog.dropTempView(TEMPORARY_ROW)
    forget_last_build(settings.warehouse_dir)
    # Every table it may erase from, changed now or not: a forget stopped while purging leaves
    # nothing to forget when run again, and the next one purges what it left (`unpurged`).
    purge(spark, tables)
    report.notes.append(
        "the erased rows are purged from these tables' files: time travel to a version before this"
        " forget no longer reaches them"
    )
    if unbuilt:
        these = "these rows" if len(erasures) > 1 else "this row"
        report.notes.append(
            f"{unbuilt} landed file{'s' if unbuilt != 1 else ''} in {settings.landing_dir} no build has read yet:"
            f" their records of {these} are withheld by Kafka key; build, then forget again, to find"
            " any that carry another key"
        )
    return report


def row_of(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """The row a parsed record is a change of: (source_db, source_table, row_key); nulls for none."""
    return (record.get("source_db"), record.get("source_table"), record.get("row_key"))


def erasure_of(
    rows: Mapping[tuple[Any, ...], Erasure], of_rows: Sequence[Mapping[str, Any]]
) -> Callable[[Mapping[str, Any]], Erasure]:
    """Which erasure an erased record or Kafka key is listed under: its row's; a record of no row
    (a tombstone, a quarantined record) or a key, the first row named whose records carry its key."""
    named_order = {row: position for position, row in enumerate(rows)}
    by_key: dict[tuple[Any, Any], Erasure] = {}
    for record in sorted(of_rows, key=lambda record: named_order[row_of(record)]):
        by_key.setdefault((record["topic"], record["key"]), rows[row_of(record)])
    first = next(iter(rows.values()))

    def of(record: Mapping[str, Any]) -> Erasure:
        return rows.get(row_of(record)) or by_key.get((record.get("topic"), record.get("key")), first)

    return of


def row_database(parsed: "DataFrame", request: ForgetRequest, row_key: str, of_key: list[dict[str, Any]]) -> str | None:
    """The source database of the row of `row_key`, from the records of its table and key (`of_key`):
    ForgetError when the table or the key is unknown, or the key is in the table of more than one
    database and none is named."""
    from pyspark.sql import functions as F

    databases = sorted(
        {record["source_db"] for record in of_key if request.source_db in (None, record["source_db"])}, key=str
    )
    if len(databases) > 1:
        raise ForgetError(
            f"{request.source_table} {row_key} is a row of more than one source database"
            f" ({', '.join(map(str, databases))}): name one with --source-db"
        )
    if databases:
        database: str | None = databases[0]
        return database
    of_table = parsed.where(F.col("source_table") == F.lit(request.source_table))
    if request.source_db is not None:
        of_table = of_table.where(F.col("source_db") == F.lit(request.source_db))
    if of_table.limit(1).count():
        raise ForgetError(
            f"no row of {request.source_table} has the key {row_key} (nothing to forget; a key is"
            " compared as cdc_current.row_key writes it: the key columns by their source names)"
        )
    tables = sorted(
        entry.source_table + ("" if entry.source_db is None else f" (source database {entry.source_db})")
        for entry in parsed.where(F.col("outcome") == "change").select("source_db", "source_table").distinct().collect()
    )
    named = request.source_table + ("" if request.source_db is None else f" of source database {request.source_db}")
    raise ForgetError(f"no source table {named} in the warehouse; its tables: {', '.join(tables) or 'none'}")


def append_erasures(
    spark: "SparkSession",
    table: str,
    source_table: str,
    erasure_of: Callable[[Mapping[str, Any]], Erasure],
    records: dict[tuple[Any, ...], dict[str, Any]],
    keys: Iterable[tuple[str, str]],
) -> None:
    """Append the erasure list's rows of this forget, each under its row's erasure (`erasure_of`):
    one per record, with an erased change's place in its source transaction (for
    cdc_transactions), and one per Kafka key, by fingerprint."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    rows = [
        erasure_row(
            erasure_of(record),
            source_table,
            now,
            topic,
            partition=partition,
            offset=offset,
            transaction=transaction_place(record),
        )
        for (topic, partition, offset), record in sorted(records.items())
    ]
    rows += [
        erasure_row(
            erasure_of({"topic": topic, "key": key}),
            source_table,
            now,
            topic,
            kafka_key_sha256=kafka_key_fingerprint(topic, key),
        )
        for topic, key in keys
    ]
    spark.createDataFrame(rows, spark.table(table).schema).write.insertInto(table)


def erasure_row(
    erasure: Erasure,
    source_table: str,
    forgotten_ts: dt.datetime,
    topic: str,
    *,
    partition: int | None = None,
    offset: int | None = None,
    kafka_key_sha256: str | None = None,
    transaction: tuple[Any, ...] = NO_TRANSACTION,
) -> tuple[Any, ...]:
    """One row of the erasure list, its columns in the table's order (macros/erasure/create_erasure_list.sql):
    a record by its identity (`partition`, `offset`) or a Kafka key by its fingerprint."""
    return (
        erasure.erasure_id,
        forgotten_ts,
        erasure.source_db,
        source_table,
        topic,
        partition,
        offset,
        kafka_key_sha256,
        *transaction,
    )


def transaction_place(record: dict[str, Any]) -> tuple[Any, ...]:
    """An erased record's TRANSACTION_COLUMNS: a change's in a source transaction, else nulls."""
    in_transaction = record.get("outcome") == "change" and record.get("transaction_id") is not None
    return tuple(record[column] if in_transaction else None for column in TRANSACTION_COLUMNS)


def erase(spark: "SparkSession", table: str, source: str, condition: str) -> int:
    """Delete the rows of `table` matching a row of the temporary view `source`; how many. A MERGE,
    not a DELETE with the values in its condition: Delta keeps each statement's predicate in its
    log, and the key must not be written there. Its commit is marked FORGET_COMMIT for `purge`."""
    with spark_settings(spark, {COMMIT_METADATA: FORGET_COMMIT}):
        [metrics] = spark.sql(
            f"merge into {table} as target using {quoted(source)} as erased on {condition} when matched then delete"
        ).collect()
    return int(metrics["num_deleted_rows"])


def purge(spark: "SparkSession", tables: Iterable[str]) -> None:
    """Remove the erased rows from the files of each table that holds some (`unpurged`): rewrite
    files that only mark them deleted (deletion vectors), then drop every file the current version
    no longer reads. Time travel to an earlier version of these tables ends here."""
    settings = {
        "spark.databricks.delta.retentionDurationCheck.enabled": "false",
        # VACUUM's own commits are what `unpurged` reads; Delta leaves them out on some file systems.
        "spark.databricks.delta.vacuum.logging.enabled": "true",
        # VACUUM lists a table's files in this many tasks, Spark's default 10,000 whatever the table's
        # size: a small table's VACUUM took 47-67 s in local mode, 3 s with 2 (the machine's cores).
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": str(spark.sparkContext.defaultParallelism),
    }
    with spark_settings(spark, settings):
        for table in tables:
            if not unpurged(spark, table):
                continue
            properties = {entry.key: entry.value for entry in spark.sql(f"show tblproperties {table}").collect()}
            if properties.get("delta.enableDeletionVectors", "false").lower() == "true":
                spark.sql(f"reorg table {table} apply (purge)")
            spark.sql(f"vacuum {table} retain 0 hours")


@contextmanager
def spark_settings(spark: "SparkSession", settings: Mapping[str, str]) -> Iterator[None]:
    """`settings` on the session for the block; each put back as it was after it (a user's session
    may set them too)."""
    before = {name: spark.conf.get(name, None) for name in settings}
    for name, value in settings.items():
        spark.conf.set(name, value)
    try:
        yield
    finally:
        for name, earlier in before.items():
            if earlier is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, earlier)


def unpurged(spark: "SparkSession", table: str) -> bool:
    """Whether `table` has an erasure (a FORGET_COMMIT) no VACUUM has followed: its older files
    still hold the erased rows. Read from the table's history, so a purge stopped half-way, by this
    forget or an earlier one, is finished by the next, and a table nothing was erased from costs
    one read of its log instead of a VACUUM (which lists every file of the table)."""
    history = spark.sql(f"describe history {table}").select("version", "operation", "userMetadata").collect()
    vacuumed = max((commit["version"] for commit in history if commit["operation"] == "VACUUM END"), default=-1)
    return any(commit["userMetadata"] == FORGET_COMMIT and commit["version"] > vacuumed for commit in history)


def typed_mart_tables(settings: Settings, request: ForgetRequest) -> tuple[list[str], str | None]:
    """The typed marts of the source table kept as tables in this schema (a consumer's choice),
    from the manifest of the last build; a note when there is no manifest to read."""
    manifest_path = manifest_of(settings, request)
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        return [], f"no dbt manifest at {manifest_path} (--target-path): typed marts kept as tables were not looked for"
    marts = []
    for node in manifest.get("nodes", {}).values():
        config = node.get("config") or {}
        if (
            node.get("resource_type") == "model"
            and config.get("materialized") in MANIFEST_MATERIALIZATIONS
            and (config.get("meta") or {}).get("cdc_source_table") == request.source_table
            and node.get("schema") == settings.schema
        ):
            marts.append(str(node.get("alias") or node["name"]))
    return sorted(marts), None


def manifest_of(settings: Settings, request: ForgetRequest) -> Path:
    if request.target_path is not None:
        return request.target_path / "manifest.json"
    if os.environ.get("DBT_TARGET_PATH"):
        return Path(os.environ["DBT_TARGET_PATH"]) / "manifest.json"
    base = Path.cwd() if settings.project_dir == INSTALLED_PROJECT_DIR else settings.project_dir
    return base / "target" / "manifest.json"


def shown_file(uri: str) -> str:
    """A landed file as its user knows it: a local path, else the URI as Spark names it."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else uri


def unbuilt_files(landing_dir: Path, deliveries: "DataFrame") -> int:
    """How many files under the landing folder no build has read (their records are unknown here)."""
    if not landing_dir.is_dir():
        return 0
    read = {shown_file(entry.landed_file) for entry in deliveries.select("landed_file").distinct().collect()}
    return sum(
        1
        for path in landing_dir.rglob("*")
        if path.is_file()
        and path.name.endswith(KCAT_SUFFIXES)
        and not any(part.startswith((".", "_")) for part in path.relative_to(landing_dir).parts)
        and str(path.resolve()) not in read
    )
