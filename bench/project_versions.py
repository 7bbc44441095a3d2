"""The demo's `dbt build` with the whole dbt project at a baseline commit and at this checkout, in one
SparkSession: what a change to models or macros costs or saves a build.

    .venv/bin/python bench/project_versions.py --baseline <git ref> [--repeat 2] [--models-only]

Both versions build the bundled demo (its typed marts included) into fresh schemas, models and
data tests alike as `cdc-dbt build` runs them (`--models-only`: models alone, as `cdc-dbt run`).
A first build warms the JVM up and is not timed; then each round builds the baseline, then this
checkout. For each version it prints the round with the least CPU: its wall time, the CPU time the JVM spent (what
two cores shared between dbt's threads do not hide) and the Spark jobs it ran, then the ratios
this checkout / baseline. Every table both versions wrote must hold the same rows (build stamps
aside), and so must a relation one version stores and the other keeps as a view.
"""

import argparse
import io
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from _session import product_session, scratch_folder
from dbt_runs import dbt_command, jobs_run, jvm_cpu_seconds, rows_digest
from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cdc_dbt.project_files import DBT_PROJECT_FILES, DBT_PROJECT_FOLDERS, copy_dbt_project
from cdc_dbt.settings import PACKAGE_PROJECT_DIR

DEMO_LANDING = PACKAGE_PROJECT_DIR / "demo" / "landing"


@dataclass
class BuildCost:
    wall: float
    jvm_cpu: float
    jobs: int


def project_at(ref: str, folder: Path) -> Path:
    """The dbt project's files as they were at commit `ref`, extracted into `folder`."""
    paths = [str(path) for path in (*DBT_PROJECT_FOLDERS, *DBT_PROJECT_FILES)]
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "--", *paths], cwd=PACKAGE_PROJECT_DIR, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def timed_build(spark: SparkSession, project: Path, target: Path, schema: str, models_only: bool) -> BuildCost:
    excluded = ["unit_test", *(["test"] if models_only else [])]
    jobs, cpu = jobs_run(spark), jvm_cpu_seconds(spark)
    started = time.perf_counter()
    dbt_command(
        "build", DEMO_LANDING, target, schema, "--exclude-resource-type", *excluded,
        project_dir=project, variables={"example_marts": True},
    )  # fmt: skip
    return BuildCost(time.perf_counter() - started, jvm_cpu_seconds(spark) - cpu, jobs_run(spark) - jobs)


def stored_tables(spark: SparkSession, schema: str) -> set[str]:
    """The tables of `schema` (its views left out)."""
    names = [table["tableName"] for table in spark.sql(f"show tables in `{schema}`").collect()]
    return {
        name
        for name in names
        if spark.sql(f"describe table extended `{schema}`.`{name}`").where("col_name = 'Type'").first()[1] != "VIEW"
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="a commit of this checkout")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--models-only", action="store_true", help="dbt's models alone, no data tests")
    args = parser.parse_args()
    with scratch_folder("cdc-dbt-bench-project-versions-") as work:
        projects = {
            "baseline": project_at(args.baseline, work / "baseline"),
            "checkout": copy_dbt_project(PACKAGE_PROJECT_DIR, work / "checkout"),
        }
        with product_session(DEMO_LANDING, work) as spark:
            timed_build(spark, projects["checkout"], work / "target-checkout", "warm_up", args.models_only)
            costs: dict[str, list[BuildCost]] = {version: [] for version in projects}
            for round_number in range(args.repeat):
                for version, project in projects.items():
                    schema = f"{version}_{round_number}"
                    # A target folder per project: dbt's partial parsing keeps one project's state there.
                    target = work / f"target-{version}"
                    costs[version].append(timed_build(spark, project, target, schema, args.models_only))
            schemas = {version: f"{version}_0" for version in projects}
            # Every relation stored by either version, read in both (a view's rows where the other stores it).
            compared = sorted(stored_tables(spark, schemas["baseline"]) | stored_tables(spark, schemas["checkout"]))
            differing = [
                name
                for name in compared
                if len({rows_digest(spark, f"`{schema}`.`{name}`") for schema in schemas.values()}) > 1
            ]
        kind = "models only" if args.models_only else "models and data tests"
        print(f"the demo's build ({kind}), the round of least JVM CPU of {args.repeat}: wall s, JVM CPU s, Spark jobs")
        best = {version: min(runs, key=lambda cost: cost.jvm_cpu) for version, runs in costs.items()}
        for version, cost in best.items():
            label = args.baseline if version == "baseline" else "this checkout"
            print(f"  {label:<16} {cost.wall:7.1f} {cost.jvm_cpu:8.1f} {cost.jobs:6d}")
        b, c = best["baseline"], best["checkout"]
        print(f"  ratio            {c.wall / b.wall:7.2f} {c.jvm_cpu / b.jvm_cpu:8.2f} {c.jobs / b.jobs:6.2f}")
        same = len(compared) - len(differing)
        print(f"relations compared (a table in either version): {len(compared)}, the same rows in {same}")
        if differing:
            raise SystemExit(f"the versions wrote different rows in: {differing}")


if __name__ == "__main__":
    main()
