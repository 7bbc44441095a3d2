"""`cdc-dbt forget` of several rows in one command against one command per row, in one run.

    python bench/forget_batch.py [--rows 5] [--events 2000] [--keys 200]

In the product's own session, it builds one generated landing (`--events` changes of `--keys`
keys) into two schemas, then forgets the same `--rows` customers from each: from the first in one
`forget` of all of them (the batch, run first: it pays the JIT's warm-up), from the second in one
`forget` per row (the baseline, as a user did before a command could take several keys). Each
`forget` is `cdc_dbt.forget.forget` as the command runs it: find the records, one MERGE per table,
the purge.

It prints both times and the ratio batch / baseline, and checks that both schemas end with the
same `cdc_current` and `cdc_history`, without the forgotten rows.
"""

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from _session import bench_settings, product_session, scratch_folder
from dbt_runs import dbt_run, rows_digest

# The generator lives only in the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from generator import generate

SOURCE_TABLE = "inventory.customers"
SCHEMAS = {"batch": "forget_batch", "baseline": "forget_one_by_one"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--keys", type=int, default=200)
    options = parser.parse_args()

    with scratch_folder("cdc-dbt-bench-forget-batch-") as work:
        landing = work / "landing"
        generate(landing, events=options.events, keys=options.keys, seed=11, partitions=2)
        with product_session(landing, work) as spark:
            from cdc_dbt.forget import ForgetRequest, forget
            from cdc_dbt.settings import Settings

            for schema in SCHEMAS.values():
                dbt_run(landing, work / f"target-{schema}", schema)
            keys = tuple(
                row["row_key"]
                for row in spark.sql(
                    f"select row_key from {SCHEMAS['batch']}.cdc_current where source_table = '{SOURCE_TABLE}'"
                    f" order by row_key limit {options.rows}"
                ).collect()
            )
            if len(keys) < options.rows:
                raise SystemExit(f"the landing has {len(keys)} customers, fewer than --rows {options.rows}")

            def settings(schema: str) -> "Settings":
                return dataclasses.replace(bench_settings(landing, work), schema=schema)

            started = time.monotonic()
            forget(spark, settings(SCHEMAS["batch"]), ForgetRequest(SOURCE_TABLE, keys))
            batch = time.monotonic() - started

            started = time.monotonic()
            for key in keys:
                forget(spark, settings(SCHEMAS["baseline"]), ForgetRequest(SOURCE_TABLE, (key,)))
            baseline = time.monotonic() - started

            for table in ("cdc_current", "cdc_history"):
                digests = {rows_digest(spark, f"{schema}.{table}") for schema in SCHEMAS.values()}
                if len(digests) != 1:
                    raise SystemExit(f"{table} differs between the batch and the forgets one by one: {digests}")
            history = spark.table(f"{SCHEMAS['batch']}.cdc_history")
            if history.where((history.source_table == SOURCE_TABLE) & history.row_key.isin(list(keys))).count():
                raise SystemExit("a forgotten row is still in cdc_history")

    print(
        f"{options.rows} rows of {SOURCE_TABLE} forgotten, a landing of {options.events} changes of {options.keys} keys"
    )
    print(f"one forget per row (baseline) : {baseline:7.2f} s")
    print(f"one forget of every row       : {batch:7.2f} s")
    print(f"ratio batch / baseline        : {batch / baseline:7.3f}")


if __name__ == "__main__":
    main()
