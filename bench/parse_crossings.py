"""The load and parse stages with each record crossing to Python twice (as built) against once.

    python bench/parse_crossings.py [--events 300000] [--keys 30000] [--rounds 2]

A record crosses to Python twice in a build: as its kcat line (`cdc_parse_kcat_line` in
`int_deliveries_loaded`, which stores the key and payload it returns) and as its record
(`cdc_parse_record` in `int_records_parsed_unbound`, reading them back). This measures what one
crossing would save, before anyone restructures the models for it. Generates the Debezium
PostgreSQL stream (kcat lines, JsonConverter with schemas), then in one SparkSession writes the two
stages' tables, as Parquet, three ways:

- `two crossings`: the lines through `cdc_parse_kcat_line` into a deliveries table, then its rows
  through `cdc_parse_record` into a parsed table (the models' shape, without their dedup);
- `one crossing`: one Arrow UDF reads the line and parses its record (the same two functions of
  the core, composed), the deliveries table holds the landed record and its parsed struct, and
  the parsed table is selected from it;
- `one crossing, no change payload`: the same, the deliveries table keeping no payload for a
  change (the parsed table keeps none already).

Each variant runs once per round, the rounds alternating, and the parsed tables are checked equal
(count and digest). It prints each variant's best time and its ratio to `two crossings`, then the
parsing core's own cost in this process (both functions over the first `--core-lines` lines, one
core): the floor a Python parse leaves, whatever the crossings.
"""

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_versions import rows_digest
from pyspark.sql import SparkSession
from pyspark.sql.types import StructField, StructType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _session import product_session, scratch_folder

from generator import generate
from udfs.events import ParsedRecord
from udfs.landing import LandedRecord, parse_kcat_line
from udfs.records import parse_record
from udfs.spark import LANDED_RECORD_TYPE, PARSED_RECORD_TYPE, arrow_batch_udf

DELIVERY_PARSED_TYPE = StructType([*LANDED_RECORD_TYPE.fields, StructField("parsed", PARSED_RECORD_TYPE)])

# The columns of int_records_parsed_unbound that the parser fills, and the payload it keeps.
PARSED_COLUMNS = """
    topic, `partition`, `offset`, kafka_ts_ms, key, if(parsed.outcome = 'change', null, payload) as payload,
    parsed.outcome, parsed.reason, parsed.source_table, parsed.op, parsed.row_key, parsed.before, parsed.after,
    parsed.unavailable_columns, parsed.changed_columns, parsed.position, parsed.source_ts_ms
"""


def record_parsed(landed: LandedRecord) -> ParsedRecord:
    """`parse_record` of a landed record without a landing reason (it has an identity then)."""
    assert landed.partition is not None and landed.offset is not None
    return parse_record(landed.key, landed.payload, landed.partition, landed.offset, landed.topic)


def delivery_parsed(line: str | None, *, keep_change_payload: bool = True) -> tuple[Any, ...] | None:
    """A kcat line's landed record with its parsed record as one more field (None without a line)."""
    if line is None:
        return None
    landed = parse_kcat_line(line)
    if landed.reason is not None:
        return (*landed, None)
    parsed = record_parsed(landed)
    if not keep_change_payload and parsed.outcome == "change":
        landed = landed._replace(payload=None)
    return (*landed, parsed)


def delivery_parsed_without_change_payload(line: str | None) -> tuple[Any, ...] | None:
    return delivery_parsed(line, keep_change_payload=False)


DELIVERIES = "create table bench.deliveries using parquet as select r.* from (select {function}(value) as r from lines)"
PARSED = "create table bench.parsed using parquet as select {columns} from {relation}"


def two_crossings(spark: SparkSession) -> None:
    spark.sql(DELIVERIES.format(function="cdc_parse_kcat_line"))
    records_parsed = (
        "(select *, cdc_parse_record(key, payload, `partition`, `offset`, topic) as parsed from bench.deliveries)"
    )
    spark.sql(PARSED.format(columns=PARSED_COLUMNS, relation=records_parsed))


def one_crossing(function: str) -> Callable[[SparkSession], None]:
    def run(spark: SparkSession) -> None:
        spark.sql(DELIVERIES.format(function=function))
        spark.sql(PARSED.format(columns=PARSED_COLUMNS, relation="bench.deliveries"))

    return run


VARIANTS: dict[str, Callable[[SparkSession], None]] = {
    "two crossings": two_crossings,
    "one crossing": one_crossing("bench_delivery_parsed"),
    "one crossing, no change payload": one_crossing("bench_delivery_parsed_without_change_payload"),
}


def core_microseconds(lines: list[str]) -> tuple[float, float]:
    """Microseconds a line for `parse_kcat_line`, and a record for `parse_record`, in this process."""
    started = time.perf_counter()
    landed = [parse_kcat_line(line) for line in lines]
    kcat_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for record in landed:
        if record.reason is None:
            record_parsed(record)
    record_seconds = time.perf_counter() - started
    return kcat_seconds / len(lines) * 1e6, record_seconds / len(lines) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--keys", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--core-lines", type=int, default=100_000)
    args = parser.parse_args()

    with scratch_folder("parse-crossings-") as scratch:
        landing = scratch / "landing"
        print(f"generating {args.events:,} events (not timed) ...", flush=True)
        print(generate(landing, events=args.events, keys=args.keys, seed=11).line(), flush=True)
        os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-memory 4g pyspark-shell")
        with product_session(landing, scratch) as spark:
            spark.udf.register("bench_delivery_parsed", arrow_batch_udf(delivery_parsed, DELIVERY_PARSED_TYPE))
            spark.udf.register(
                "bench_delivery_parsed_without_change_payload",
                arrow_batch_udf(delivery_parsed_without_change_payload, DELIVERY_PARSED_TYPE),
            )
            lines = spark.read.text(str(landing), pathGlobFilter="*.json", recursiveFileLookup=True)
            lines.createOrReplaceTempView("lines")
            spark.sql("create database if not exists bench")

            times: dict[str, list[float]] = {name: [] for name in VARIANTS}
            digests = set()
            for round_number in range(1, args.rounds + 1):
                for name, run in VARIANTS.items():
                    spark.sql("drop table if exists bench.deliveries")
                    spark.sql("drop table if exists bench.parsed")
                    started = time.perf_counter()
                    run(spark)
                    times[name].append(time.perf_counter() - started)
                    digest = rows_digest(spark, "bench.parsed")
                    digests.add(digest)
                    print(f"round {round_number}: {name:<32} {times[name][-1]:6.1f} s, {digest[0]:,} rows", flush=True)
            if len(digests) != 1:
                raise SystemExit(f"the variants' parsed tables differ: {digests}")

            core_lines = [row.value for row in lines.limit(args.core_lines).collect()]

    baseline = min(times["two crossings"])
    print(f"\n{'variant':<34}{'best s':>8}{'/ two crossings':>17}")
    for name, seconds in times.items():
        print(f"{name:<34}{min(seconds):>8.1f}{min(seconds) / baseline:>16.2f}x")
    kcat_us, record_us = core_microseconds(core_lines)
    records = digests.pop()[0]
    print(
        f"\nthe parsing core, one process, {len(core_lines):,} lines: parse_kcat_line {kcat_us:.1f} µs a line,"
        f" parse_record {record_us:.1f} µs a record; for the {records:,} records"
        f" {records * (kcat_us + record_us) / 1e6:.1f} s of one core"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
