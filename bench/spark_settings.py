"""A warm build of the demo with some Spark settings added and without them: what a setting of the
test suite's Spark (or a user's) saves or costs a build of small inputs.

    .venv/bin/python bench/spark_settings.py [--repeat 2] [--set NAME=VALUE ...] [--base NAME=VALUE ...]

Each round starts a fresh process per variant, the order swapped every round so that a change in
the machine's load falls on both: `base` (the --base settings) and `with --set` (the --base
settings and the --set ones). Each process builds the demo (its typed marts, models and data
tests, as `cdc-dbt build`) once to warm the JVM up, untimed, then again into a new schema, timed:
wall seconds, the JVM's CPU seconds and the Spark jobs it ran. Prints every round, then the round
of least JVM CPU of each variant and the ratios `with --set` / `base`. Every build must give the
same rows in cdc_changes, cdc_current, cdc_history and cdc_quarantine.

Without --set: the setting the suite's own session took last (2026-12-07: expressions interpreted,
not compiled). Without --base: the suite's other settings for small inputs, as
tests/integration/conftest.py has them (a unit test holds these equal to it), so that the default
run measures what the suite gained.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _session import product_session, scratch_folder
from dbt_runs import dbt_command, jobs_run, jvm_cpu_seconds, rows_digest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

DEMO_LANDING = PACKAGE_PROJECT_DIR / "demo" / "landing"
COMPARED_TABLES = ("cdc_changes", "cdc_current", "cdc_history", "cdc_quarantine")
"""Every variant must build these with the same rows: a setting here may change the cost, never the result."""
SUITE_ADDED = {
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
SUITE_BASE = {
    "spark.databricks.delta.snapshotCache.storageLevel": "MEMORY_ONLY",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.cache.maxEntries": "5000",
    "spark.sql.adaptive.enabled": "false",
    "spark.databricks.delta.stats.skipping": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.ui.retainedJobs": "50",
    "spark.ui.retainedStages": "50",
    "spark.sql.ui.retainedExecutions": "20",
    "spark.driver.defaultJavaOptions": "-XX:ReservedCodeCacheSize=512m",
    "spark.executor.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
    "spark.driver.memory": "6g",
    "spark.sql.catalogImplementation": "in-memory",
}
"""The suite's own session: SMALL_INPUT_SPARK_CONF with SUITE_SESSION_JVM over it, less SUITE_ADDED."""


def setting(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"{text!r}: a setting is NAME=VALUE")
    return name, value


def build_demo(work: Path, schema: str) -> None:
    """The demo's `cdc-dbt build` (its typed marts, models and data tests) into `schema`."""
    excluded = ["--exclude-resource-type", "unit_test"]
    dbt_command("build", DEMO_LANDING, work / "target", schema, *excluded, variables={"example_marts": True})


def timed_build(conf: dict[str, str]) -> dict[str, Any]:
    """In this process: a session with `conf`, the demo built once untimed, then once timed: its
    costs, and a digest of each of COMPARED_TABLES."""
    with scratch_folder("cdc-dbt-bench-spark-settings-") as work, product_session(DEMO_LANDING, work, conf) as spark:
        build_demo(work, "warm_up")
        jobs, cpu, started = jobs_run(spark), jvm_cpu_seconds(spark), time.perf_counter()
        build_demo(work, "timed")
        return {
            "wall": time.perf_counter() - started,
            "jvm_cpu": jvm_cpu_seconds(spark) - cpu,
            "jobs": jobs_run(spark) - jobs,
            "digests": {table: list(rows_digest(spark, f"timed.{table}")) for table in COMPARED_TABLES},
        }


def in_own_process(conf: dict[str, str]) -> dict[str, Any]:
    """`timed_build(conf)` in a fresh Python process (its own JVM), with no Spark or cdc-dbt setting
    of this shell's."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("CDC_", "SPARK_CONF"))}
    child = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(conf)],
        env=environment, capture_output=True, text=True, cwd=PACKAGE_PROJECT_DIR,
    )  # fmt: skip
    if child.returncode != 0:
        raise SystemExit(f"a build failed:\n{child.stdout[-3000:]}{child.stderr[-3000:]}")
    return dict(json.loads(child.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--set", type=setting, action="append", help="a setting to try (default: the suite's last)")
    parser.add_argument("--base", type=setting, action="append", help="a setting of both (default: the suite's)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(timed_build(json.loads(args.child))))
        return
    base = dict(args.base) if args.base else SUITE_BASE
    tried = dict(args.set) if args.set else SUITE_ADDED
    variants = {"base": base, "with --set": {**base, **tried}}
    costs: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    for round_number in range(args.repeat):
        order = list(variants) if round_number % 2 == 0 else list(reversed(variants))
        for name in order:
            cost = in_own_process(variants[name])
            costs[name].append(cost)
            print(f"round {round_number + 1}, {name:<10}: wall {cost['wall']:6.1f} s, JVM CPU {cost['jvm_cpu']:6.1f} s,"
                  f" {cost['jobs']:.0f} jobs", flush=True)  # fmt: skip
    digests = {json.dumps(cost["digests"], sort_keys=True) for runs in costs.values() for cost in runs}
    if len(digests) > 1:
        raise SystemExit(f"the variants built different rows in {', '.join(COMPARED_TABLES)}: {sorted(digests)}")
    print(f"\n--set {' '.join(f'{name}={value}' for name, value in tried.items())}")
    print(f"the demo's warm build, the round of least JVM CPU of {args.repeat}: wall s, JVM CPU s, Spark jobs")
    best = {name: min(runs, key=lambda cost: cost["jvm_cpu"]) for name, runs in costs.items()}
    for name, cost in best.items():
        print(f"  {name:<12} {cost['wall']:7.1f} {cost['jvm_cpu']:8.1f} {cost['jobs']:6.0f}")
    with_set, without = best["with --set"], best["base"]
    ratios = (with_set[measure] / without[measure] for measure in ("wall", "jvm_cpu", "jobs"))
    print("  ratio        {:7.2f} {:8.2f} {:6.2f}".format(*ratios))


if __name__ == "__main__":
    main()
