"""Delta against Parquet: builds, reads of cdc_current, and size on disk, in one SparkSession.

    python bench/table_formats.py [--events 1000000] [--keys 100000] [--batch-share 0.01]

Generates a Debezium PostgreSQL stream and cuts every partition at the same share (the newest 1%
is the batch, as bench/incremental_build.py does). Then, for each format, in the same session and
warehouse (each format its own schema), after an untimed warm-up build of a small stream:

- a cold `dbt run` over the first 99%, then the 1% batch as an incremental `dbt run`;
- a point query of `cdc_current` (one key) and a full scan of it (count and total row length),
  each the best of five: on Delta a table, on Parquet the view taking each key's newest
  generation (merge-on-read);
- the size on disk of the schema's tables (Delta's log included).

It checks that both formats hold the same `cdc_history`, and prints each figure with the ratio
Delta / Parquet.
"""

import argparse
import os
import shutil
import sys
from pathlib import Path

from _session import bench_settings, product_session, scratch_folder
from dbt_runs import dbt_run
from incremental_build import landed_history_and_batch
from model_versions import rows_digest
from parse_throughput import best_seconds

# This checkout's code, and the generator, which lives only in the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator import generate

FORMATS = ("parquet", "delta")
READS = 5
"""Each read of cdc_current is timed this many times; the best counts."""


def run_in_format(table_format: str, landing: Path, target: Path, schema: str, *extra: str) -> float:
    os.environ["CDC_TABLE_FORMAT"] = table_format
    return dbt_run(landing, target, schema, *extra)


def sql_string(value: str) -> str:
    """`value` as a Spark SQL string literal (a key from the data, quotes and all)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--batch-share", type=float, default=0.01)
    arguments = parser.parse_args()

    with scratch_folder("cdc-bench-formats-") as work:
        landing, warm_up = work / "landing", work / "warm-up"
        batch_records = landed_history_and_batch(work, arguments.events, arguments.keys, arguments.batch_share)
        generate(warm_up, events=20_000, keys=2_000, seed=5, partitions=3)
        settings = bench_settings(landing, work)
        with product_session(landing, work) as spark:
            for table_format in FORMATS:
                run_in_format(table_format, warm_up, work / "target", f"warm_up_{table_format}")

            cold, incremental = {}, {}
            for table_format in FORMATS:
                cold[table_format] = run_in_format(table_format, landing, work / "target", f"bench_{table_format}")
            shutil.move(work / "batch", landing / "batch")
            for table_format in FORMATS:
                incremental[table_format] = run_in_format(
                    table_format, landing, work / "target", f"bench_{table_format}"
                )

            point, scan, size = {}, {}, {}
            for table_format in FORMATS:
                schema = f"bench_{table_format}"
                [key] = spark.sql(f"select source_table, row_key from {schema}.cdc_current limit 1").collect()
                point[table_format] = best_seconds(
                    lambda schema=schema, key=key: spark.sql(
                        f"select row from {schema}.cdc_current"
                        f" where source_table = {sql_string(key[0])} and row_key = {sql_string(key[1])}"
                    ).collect(),
                    READS,
                )
                scan[table_format] = best_seconds(
                    lambda schema=schema: spark.sql(
                        f"select count(*), sum(length(row)) from {schema}.cdc_current"
                    ).collect(),
                    READS,
                )
                size[table_format] = folder_bytes(settings.tables_dir / f"{schema}.db")
            same = rows_digest(spark, "bench_delta.cdc_history") == rows_digest(spark, "bench_parquet.cdc_history")

            print(f"{arguments.events:,} events over {arguments.keys:,} keys; batch {batch_records:,} records")
            print(f"{'':34}{'parquet':>10}{'delta':>10}{'delta/parquet':>15}")
            for label, figures, unit in (
                ("cold build (99%), s", cold, 1.0),
                ("incremental build (1%), s", incremental, 1.0),
                ("cdc_current point query, ms", point, 1000.0),
                ("cdc_current full scan, ms", scan, 1000.0),
                ("tables on disk, MB", size, 1e-6),
            ):
                parquet, delta = figures["parquet"] * unit, figures["delta"] * unit
                print(f"{label:34}{parquet:>10.1f}{delta:>10.1f}{delta / parquet:>15.2f}")
            print(f"same cdc_history in both formats: {same}")
            if not same:
                raise SystemExit("the formats hold different histories")


if __name__ == "__main__":
    main()
