"""Envelope parsing throughput: our UDF against Spark's native `from_json` and a one-process ceiling.

    python bench/parse_throughput.py [--events 30000] [--repeat 2] [--cores N] [--partitions P]

Generates Debezium PostgreSQL change events with generator (kcat lines, JsonConverter with
schemas) and keeps the row-change records (tombstones and transaction markers left out). The same
records are measured twice: as written (`{"schema": ..., "payload": {...}}`, key with its schema
too) and schemaless (key and payload stripped to the inner `payload`). In one run it times

- udf: `cdc_parse_record(key, payload, partition, offset, topic)` as `udfs.spark.register`
  registers it (Arrow-batched by default), every field of its struct written to Spark's `noop`
  sink, so nothing is pruned;
- from_json: Spark's native `from_json` with an explicit schema of the envelope (`before`/`after`
  as JSON text, `op`, `ts_ms`, every `source` and `transaction` field, the key's payload), written
  the same way;
- ceiling: one Python process decoding the same payloads with `udfs.json_text.loads` (orjson);
- parse_record: one Python process running the pure parser on the same records.

Before timing, the UDF and from_json must agree on the ops, LSNs and `after` images they read.
Each figure is the best of `--repeat` runs over data cached in Spark in `--partitions` slices
(reading files is not timed). Also printed: the fixed cost of one Python UDF task (tasks of one
tombstone each, against the same tasks without Python), which every slice pays once.
Ratios: UDF/from_json (records/s over records/s) and UDF against the ceiling scaled to the cores
Spark used, `ceiling / 2 x cores` (the target is at least 1.0).
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cdc_dbt.session import PYTHON_WORKER_DAEMON, SPARK_CONF_DIR
from generator import TRANSACTION_TOPIC, generate
from udfs import json_text
from udfs import spark as registration
from udfs.landing import parse_kcat_line
from udfs.records import parse_record

Record = tuple[str | None, str, int, int, str]
"""key, payload, partition, offset, topic: the arguments of cdc_parse_record."""

SOURCE_TYPE = """struct<
    version: string, connector: string, name: string, ts_ms: bigint, snapshot: string,
    db: string, sequence: string, schema: string, table: string, txId: bigint, lsn: bigint,
    xmin: bigint>"""
ENVELOPE_TYPE = f"""struct<
    before: string, after: string, source: {SOURCE_TYPE}, op: string, ts_ms: bigint,
    transaction: struct<id: string, total_order: bigint, data_collection_order: bigint>>"""
"""The envelope as Spark reads it; an object read as `string` stays its JSON text."""


def landed_records(landing: Path) -> list[Record]:
    """The row-change records of the generated topics, with their converter schemas."""
    records = []
    for path in sorted(landing.rglob("*.json")):
        if path.parent.name == TRANSACTION_TOPIC:
            continue
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                landed = parse_kcat_line(line)
                if landed.payload is None or landed.reason is not None:
                    continue  # tombstones: nothing to parse
                assert landed.topic is not None and landed.partition is not None and landed.offset is not None
                records.append((landed.key, landed.payload, landed.partition, landed.offset, landed.topic))
    return records


def schemaless(records: Iterable[Record]) -> list[Record]:
    """The same records as a connector with `schemas.enable=false` writes them."""
    return [
        (
            None if key is None else orjson.dumps(orjson.loads(key)["payload"]).decode(),
            orjson.dumps(orjson.loads(payload)["payload"]).decode(),
            partition,
            offset,
            topic,
        )
        for key, payload, partition, offset, topic in records
    ]


def best_seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def decode_all(records: list[Record]) -> None:
    for record in records:
        json_text.loads(record[1])


def parse_all(records: list[Record]) -> None:
    for key, payload, partition, offset, topic in records:
        parse_record(key, payload, partition, offset, topic)


def start_spark(cores: int) -> SparkSession:
    os.environ.setdefault("SPARK_CONF_DIR", str(SPARK_CONF_DIR))
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.appName("cdc-dbt parse throughput")
        .master(f"local[{cores}]")
        .config("spark.driver.memory", "2g")
        .config("spark.python.daemon.module", PYTHON_WORKER_DAEMON)  # as the builds run
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    registration.register(spark)
    return spark


def cached_frame(spark: SparkSession, records: list[Record], path: Path, partitions: int) -> DataFrame:
    """The records as a DataFrame cached in Spark, `partitions` even slices."""
    columns = list(zip(*records, strict=True))
    table = pa.table(
        {
            "key": pa.array(columns[0], pa.string()),
            "payload": pa.array(columns[1], pa.string()),
            "partition": pa.array(columns[2], pa.int32()),
            "offset": pa.array(columns[3], pa.int64()),
            "topic": pa.array(columns[4], pa.string()),
        }
    )
    pq.write_table(table, path)
    frame = spark.read.parquet(str(path)).repartition(partitions).cache()
    assert frame.count() == len(records)
    return frame


def udf_parsed(frame: DataFrame) -> DataFrame:
    return frame.select(F.expr("cdc_parse_record(key, payload, `partition`, `offset`, topic)").alias("parsed"))


def native_parsed(frame: DataFrame, with_schema: bool) -> DataFrame:
    if with_schema:
        envelope = F.from_json("payload", f"struct<payload: {ENVELOPE_TYPE}>").getField("payload")
        row_key: Column = F.from_json("key", "struct<payload: string>").getField("payload")
    else:
        envelope = F.from_json("payload", ENVELOPE_TYPE)
        row_key = F.col("key")
    return frame.select(envelope.alias("envelope"), row_key.alias("row_key"), "partition", "offset", "topic")


def agreement(frame: DataFrame, with_schema: bool) -> None:
    """UDF and from_json read the same ops, LSNs and images (also warms both paths up)."""
    by_udf = udf_parsed(frame).select(
        F.col("parsed.outcome").alias("outcome"),
        F.col("parsed.op").alias("op"),
        F.col("parsed.source_lsn").alias("lsn"),
        F.col("parsed.after").alias("after"),
    )
    by_native = native_parsed(frame, with_schema).select(
        F.lit("change").alias("outcome"),
        F.col("envelope.op").alias("op"),
        F.col("envelope.source.lsn").alias("lsn"),
        F.col("envelope.after").alias("after"),
    )
    summaries = [
        sorted(
            tuple(row)
            for row in parsed.groupBy("outcome", "op").agg(F.count("*"), F.sum("lsn"), F.count("after")).collect()
        )
        for parsed in (by_udf, by_native)
    ]
    assert summaries[0] == summaries[1], f"UDF and from_json disagree: {summaries}"


def task_overhead_ms(spark: SparkSession, tasks: int) -> float:
    """What one task of the Python UDF costs beyond a JVM-only task, in ms of one core."""
    one_row_tasks = spark.range(0, tasks, 1, tasks)
    tombstone = "cdc_parse_record(cast(null as string), cast(null as string), 0, id, 't')"
    with_python = noop_write(one_row_tasks.select(F.expr(tombstone).alias("parsed")))
    jvm_only = noop_write(one_row_tasks.select(F.hash("id").alias("h")))
    with_python()  # start the Python workers
    extra = best_seconds(with_python, 2) - best_seconds(jvm_only, 2)
    return max(0.0, extra) * spark.sparkContext.defaultParallelism / tasks * 1000


def noop_write(frame: DataFrame) -> Callable[[], None]:
    return lambda: frame.write.format("noop").mode("overwrite").save()


def rows(results: dict[str, float], count: int) -> Iterator[str]:
    yield f"{'path':<38}{'best s':>9}{'records/s':>12}"
    for name, seconds in results.items():
        yield f"{name:<38}{seconds:>9.2f}{count / seconds:>12,.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=30_000, help="row-change events to generate")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per path; the best counts")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2, help="Spark local[N]")
    parser.add_argument("--partitions", type=int, help="slices of the cached records (default 4 x cores)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cdc-bench-parse-"))
    try:
        measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # about 5 KB per event
    return 0


def measure(args: argparse.Namespace, work: Path) -> None:
    started = time.perf_counter()
    generate(work / "landing", events=args.events, keys=max(16, args.events // 10), fmt="kcat")
    variants = {"schema": landed_records(work / "landing")}
    variants["schemaless"] = schemaless(variants["schema"])
    count = len(variants["schema"])
    sizes = {name: sum(len(record[1]) for record in records) / count for name, records in variants.items()}
    print(
        f"{count:,} row-change records; mean payload {sizes['schema']:,.0f} bytes with schema,"
        f" {sizes['schemaless']:,.0f} without"
    )

    results: dict[str, float] = {}
    for name, records in variants.items():
        parse_all(records[:1000])  # warm caches and lazily built tables
        results[f"ceiling: json_text.loads, {name}"] = best_seconds(partial(decode_all, records), args.repeat)
        results[f"parse_record, 1 process, {name}"] = best_seconds(partial(parse_all, records), args.repeat)

    spark = start_spark(args.cores)
    cores = spark.sparkContext.defaultParallelism
    partitions = args.partitions or cores * 4
    overhead_ms = task_overhead_ms(spark, tasks=cores * 8)
    for name, records in variants.items():
        frame = cached_frame(spark, records, work / f"{name}.parquet", partitions)
        agreement(frame, with_schema=name == "schema")
        results[f"udf cdc_parse_record, {name}"] = best_seconds(noop_write(udf_parsed(frame)), args.repeat)
        results[f"from_json, {name}"] = best_seconds(
            noop_write(native_parsed(frame, with_schema=name == "schema")), args.repeat
        )
        frame.unpersist(blocking=True)
    spark.stop()

    python = sys.version.split()[0]
    print(f"Python {python}, Spark local[{args.cores}]: {cores} cores used; best of {args.repeat} runs each")
    print(
        f"one Python UDF task costs {overhead_ms:,.0f} ms of a core beyond a JVM task;"
        f" the Spark paths run {partitions} tasks per pass"
    )
    print("\n".join(rows(results, count)))
    rate = {name: count / seconds for name, seconds in results.items()}
    print(f"{'ratio':<52}{'schema':>10}{'schemaless':>12}")
    ratios: dict[str, Callable[[str], float]] = {
        "udf / from_json (target >= 2.5)": lambda v: rate[f"udf cdc_parse_record, {v}"] / rate[f"from_json, {v}"],
        f"udf / (ceiling / 2 x {cores} cores) (target >= 1.0)": lambda v: (
            rate[f"udf cdc_parse_record, {v}"] / (rate[f"ceiling: json_text.loads, {v}"] / 2 * cores)
        ),
        f"udf / (parse_record x {cores} cores)": lambda v: (
            rate[f"udf cdc_parse_record, {v}"] / (rate[f"parse_record, 1 process, {v}"] * cores)
        ),
    }
    for label, ratio in ratios.items():
        print(f"{label:<52}{ratio('schema'):>10.2f}{ratio('schemaless'):>12.2f}")
    print(f"whole run {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
