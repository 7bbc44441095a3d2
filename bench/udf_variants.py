"""Plain Python UDFs against Arrow-batched ones, on the same generated Debezium records.

    python bench/udf_variants.py [--events 200000] [--repeat 3]

Generates kcat files with generator, then times, in one Spark session and one run, the
two parsing UDFs of the staging path (cdc_parse_kcat_line then cdc_parse_record) as
- plain: row-at-a-time pickled Python UDFs (Spark's classic path);
- arrow: the same functions with `useArrow=True` (Arrow batches between JVM and Python, each
  result converted row by row);
- arrow batches: the same functions in an `arrow_udf` over whole batches, each result column
  built a field at a time (`udfs.spark.over_arrow_batches`, what `udfs.spark.register` registers);
- pandas: the same functions mapped over pandas Series in a `pandas_udf`.
Each variant's best of `--repeat` runs is printed with its ratio to the plain baseline.
"""

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import pandas_udf, udf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _session import product_session, scratch_folder

from generator import generate
from udfs import spark as registration
from udfs.landing import parse_kcat_line
from udfs.records import parse_record


def plain_or_arrow(arrow: bool) -> tuple[Any, Any]:
    # PySpark's row-at-a-time Arrow conversion takes only lists for arrays: that form pays for
    # the copy of each result (the others take the parser's tuples as they are).
    line_function = with_lists(registration.parse_kcat_line_row) if arrow else registration.parse_kcat_line_row
    record_function = with_lists(registration.parse_record) if arrow else registration.parse_record
    line_udf = udf(line_function, registration.LANDED_RECORD_TYPE, useArrow=arrow)
    record_udf = udf(record_function, registration.PARSED_RECORD_TYPE, useArrow=arrow)
    return line_udf, record_udf


def with_lists(row_function: Callable[..., Any]) -> Callable[..., Any]:
    """`row_function` with each tuple field of its result (an array) as a list."""

    def listed(*arguments: Any) -> tuple[Any, ...] | None:
        record = row_function(*arguments)
        if record is None:
            return None
        return tuple(list(value) if isinstance(value, tuple) else value for value in record)

    return listed


def arrow_batches_variant() -> tuple[Any, Any]:
    return (
        registration.arrow_batch_udf(registration.parse_kcat_line_row, registration.LANDED_RECORD_TYPE),
        registration.arrow_batch_udf(registration.parse_record, registration.PARSED_RECORD_TYPE),
    )


def pandas_variant(spark: SparkSession) -> tuple[Any, Any]:
    landed_fields = registration.LANDED_RECORD_TYPE
    parsed_fields = registration.PARSED_RECORD_TYPE

    @pandas_udf(landed_fields)  # type: ignore[call-overload]
    def line_udf(lines: pd.Series) -> pd.DataFrame:
        rows = [parse_kcat_line(line) for line in lines]
        frame = pd.DataFrame(rows, columns=landed_fields.names)
        frame["headers"] = [[{"key": k, "value": v} for k, v in headers] for headers in frame["headers"]]
        return frame

    @pandas_udf(parsed_fields)  # type: ignore[call-overload]
    def record_udf(keys: pd.Series, payloads: pd.Series, partitions: pd.Series, offsets: pd.Series) -> pd.DataFrame:
        rows = [
            parse_record(key, payload, int(partition), int(offset))
            for key, payload, partition, offset in zip(keys, payloads, partitions, offsets, strict=True)
        ]
        return pd.DataFrame(rows, columns=parsed_fields.names)

    return line_udf, record_udf


def pipeline(lines: DataFrame, line_udf: Any, record_udf: Any) -> DataFrame:
    landed = lines.select(line_udf("value").alias("r")).select("r.*")
    return landed.select(record_udf("key", "payload", "partition", "offset").alias("p")).select("p.outcome")


def best_seconds(frame: DataFrame, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        frame.write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with scratch_folder("cdc-bench-") as work:
        summary = generate(work / "landing", events=args.events, keys=max(16, args.events // 10), fmt="kcat")
        with product_session(work / "landing", work) as spark:
            lines = spark.read.option("recursiveFileLookup", "true").text(str(work / "landing")).cache()
            records = lines.count()
            print(f"{summary.events} events, {records} landed records, {spark.sparkContext.defaultParallelism} cores")

            variants = {
                "plain": plain_or_arrow(False),
                "arrow": plain_or_arrow(True),
                "arrow batches": arrow_batches_variant(),
                "pandas": pandas_variant(spark),
            }
            outcomes = {
                name: pipeline(lines, *udfs).groupBy("outcome").count().collect() for name, udfs in variants.items()
            }
            assert len({tuple(sorted(map(tuple, rows))) for rows in outcomes.values()}) == 1, "variants disagree"

            seconds = {name: best_seconds(pipeline(lines, *udfs), args.repeat) for name, udfs in variants.items()}
            baseline = seconds["plain"]
            print(f"{'variant':<14}{'best s':>9}{'records/s':>12}{'vs plain':>10}")
            for name, value in seconds.items():
                print(f"{name:<14}{value:>9.2f}{records / value:>12,.0f}{baseline / value:>9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
