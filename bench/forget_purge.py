"""`cdc-dbt forget`'s purge against a plain `VACUUM ... RETAIN 0 HOURS` of every table, in one run.

    python bench/forget_purge.py [--tables 4] [--erased 2]

In the product's own session, it makes `--tables` small Delta tables (1,000 rows, three appends)
twice over, and erases one row from `--erased` of each set with forget's own `erase` (a MERGE
marked as forget's). Then it times:

- the baseline: each table of the first set vacuumed as the purge did before, every table, with
  Spark's listing parallelism left at its default (10,000 tasks to list a table's files);
- `cdc_dbt.forget.purge` over the second set: only the tables its history shows erased and not
  yet vacuumed, listed in as many tasks as Spark has cores.

It prints both times and the ratio purge / baseline, and checks that every erased table of both
sets kept no file of a version before its erasure (each VACUUM did its work).
"""

import argparse
import time
from pathlib import Path

from _session import product_session, scratch_folder
from pyspark.sql import SparkSession


def make_tables(spark: SparkSession, names: list[str]) -> None:
    """Each a Delta table of four files: 1,000 rows, then three appends of 10."""
    for name in names:
        spark.sql(f"create or replace table {name} using delta as select id, cast(id as string) as s from range(1000)")
        for _ in range(3):
            spark.sql(f"insert into {name} select id, 'appended' from range(10)")


def data_files(warehouse: Path, name: str) -> int:
    """The data files in the folder of table `name` (schema.table), whichever version reads them."""
    schema, table = name.split(".")
    folder = warehouse / "tables" / f"{schema}.db" / table
    return sum(1 for path in folder.glob("*.parquet"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--erased", type=int, default=2)
    options = parser.parse_args()

    with scratch_folder("cdc-dbt-bench-forget-") as work, product_session(work / "landing", work) as spark:
        from cdc_dbt.forget import erase, purge, spark_settings

        spark.sql("create schema if not exists bench")
        spark.createDataFrame([(5,)], "id bigint").createOrReplaceTempView("erased_ids")
        sets = {kind: [f"bench.{kind}_{number}" for number in range(options.tables)] for kind in ("plain", "purge")}
        for names in sets.values():
            make_tables(spark, names)
            for name in names[: options.erased]:
                erase(spark, name, "erased_ids", "target.id = erased.id")

        with spark_settings(spark, {"spark.databricks.delta.retentionDurationCheck.enabled": "false"}):
            started = time.monotonic()
            for name in sets["plain"]:
                spark.sql(f"vacuum {name} retain 0 hours")
            baseline = time.monotonic() - started

        started = time.monotonic()
        purge(spark, sets["purge"])
        purged = time.monotonic() - started

        warehouse = work / "warehouse"
        for names in sets.values():
            for name in names[: options.erased]:
                # The table's first version wrote one file and each append one; the MERGE rewrote
                # the file holding id 5. A vacuumed table keeps only what its newest version reads.
                [detail] = spark.sql(f"describe detail {name}").collect()
                assert data_files(warehouse, name) == detail["numFiles"], f"{name}: files left from before its erasure"

    print(f"{options.tables} tables, {options.erased} of them with an erasure")
    print(f"VACUUM of every table, default listing : {baseline:7.2f} s")
    print(f"cdc_dbt.forget.purge                   : {purged:7.2f} s")
    print(f"ratio purge / baseline                 : {purged / baseline:7.3f}")


if __name__ == "__main__":
    main()
