"""A `cdc-dbt build` of one new file of 10 records after the demo, against the demo's full build.

    .venv/bin/python bench/small_increment_build.py [--records 10] [--slowest 8]

What a user runs after each small landing, models and data tests alike (dbt's unit tests left
out, as `cdc-dbt build` leaves them). The demo landing is copied with the last records of one
PostgreSQL partition held back; in one SparkSession and one warehouse it then times:

- warm-up: a build of the copy into a schema of its own, not timed (the first build of a JVM pays
  for compiling Spark's code, which no later build does);
- full build: the copy into an empty schema;
- increment: the held-back records land as one new file, and the same schema is built again.

It prints both times, their ratio, how many records the increment parsed, and where the
increment's time went: its models and its data tests, each summed over nodes (dbt runs them on
the profile's threads), and the slowest nodes.
"""

import argparse
import json
import shutil
from pathlib import Path

from _session import product_session, scratch_folder
from dbt_runs import dbt_command, slowest_models

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

DEMO_LANDING = PACKAGE_PROJECT_DIR / "demo" / "landing"
HELD_BACK_FROM = Path("dbserver1.inventory.customers") / "part-0-00000.json"
SCHEMA = "bench_small_increment"
BUILD_OPTIONS = ("--exclude-resource-type", "unit_test")
"""As `cdc-dbt build` runs: dbt's unit tests are CI's."""


def hold_back(landing: Path, records: int) -> list[str]:
    """Remove the last `records` lines of one partition's file; return them."""
    path = landing / HELD_BACK_FROM
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-records]))
    return lines[-records:]


def time_by_resource_type(target: Path) -> dict[str, float]:
    """Seconds summed over the last build's nodes, per resource type."""
    sums: dict[str, float] = {}
    for result in json.loads((target / "run_results.json").read_text())["results"]:
        kind = result["unique_id"].split(".", 1)[0]
        sums[kind] = sums.get(kind, 0.0) + result["execution_time"]
    return sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10)
    parser.add_argument("--slowest", type=int, default=8, help="how many of the increment's slowest nodes to print")
    arguments = parser.parse_args()

    with scratch_folder("cdc-bench-small-increment-") as work:
        landing, target = work / "landing", work / "target"
        shutil.copytree(DEMO_LANDING, landing)
        held_back = hold_back(landing, arguments.records)
        with product_session(landing, work) as spark:
            dbt_command("build", landing, target, f"{SCHEMA}_warm_up", *BUILD_OPTIONS)
            full_seconds = dbt_command("build", landing, target, SCHEMA, *BUILD_OPTIONS)
            full_by_type = time_by_resource_type(target)
            (landing / "increment").mkdir()
            (landing / "increment" / "part-0-00001.json").write_text("".join(held_back))
            increment_seconds = dbt_command("build", landing, target, SCHEMA, *BUILD_OPTIONS)
            increment_by_type = time_by_resource_type(target)
            parsed = spark.sql(
                f"select count(*) from {SCHEMA}.int_deliveries_loaded"
                f" where loaded_at = (select max(loaded_at) from {SCHEMA}.int_deliveries_loaded)"
            ).first()[0]

            print(f"full build of the demo (less {arguments.records} records): {full_seconds:6.1f} s")
            print(f"build of one new file of {arguments.records} records:       {increment_seconds:6.1f} s")
            print(f"increment / full build:                          {increment_seconds / full_seconds:6.2f}")
            print(f"records the increment loaded: {parsed}")
            for name, by_type in (("full build", full_by_type), ("increment", increment_by_type)):
                print(
                    f"{name}, summed over nodes: models {by_type.get('model', 0.0):.1f} s,"
                    f" data tests {by_type.get('test', 0.0):.1f} s"
                )
            slowest = ", ".join(f"{name} {seconds}" for name, seconds in slowest_models(target, arguments.slowest))
            print(f"slowest nodes of the increment (s): {slowest}")
            if parsed != arguments.records:
                raise SystemExit(f"the increment loaded {parsed} records, not {arguments.records}")


if __name__ == "__main__":
    main()
