"""What the build benchmarks share: one timed `dbt run` of the packaged project, its slowest models,
and a digest of the rows a build wrote."""

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BUILD_STAMPS = ("loaded_at", "parsed_at", "bound_at", "generation")
"""Columns that say when a build ran, which differ between any two builds (`generation`: a row-state
table's, its build's start)."""


def dbt_run(landing: Path, target: Path, schema: str, *extra: str) -> float:
    """Run the project's models over `landing` into `schema`, in this process's SparkSession; seconds."""
    return dbt_command("run", landing, target, schema, *extra)


def dbt_command(
    command: str,
    landing: Path,
    target: Path,
    schema: str,
    *extra: str,
    project_dir: Path = PACKAGE_PROJECT_DIR,
    variables: dict[str, Any] | None = None,
) -> float:
    """dbt `command` (run, build) of the project (cdc-dbt's own, or a copy at `project_dir`) over
    `landing` into `schema`, with `variables` added to the project's vars, in this process's
    SparkSession; seconds."""
    from dbt.cli.main import dbtRunner

    os.environ["CDC_LANDING_DIR"] = str(landing)
    os.environ["CDC_SCHEMA"] = schema
    args = [
        command,
        "--project-dir", str(project_dir),
        "--profiles-dir", str(PACKAGE_PROJECT_DIR),
        "--target", "local",
        "--target-path", str(target),
        "--vars", json.dumps({"landing_schema": f"{schema}_landing", **(variables or {})}),
        "--quiet",
        *extra,
    ]  # fmt: skip
    started = time.perf_counter()
    result = dbtRunner().invoke(args)
    seconds = time.perf_counter() - started
    if not result.success:
        raise SystemExit(f"dbt {command} failed: {result.exception or result.result}")
    return seconds


def slowest_models(target: Path, count: int) -> list[tuple[str, float]]:
    """The nodes of the last run that took longest, with their seconds."""
    results = json.loads((target / "run_results.json").read_text())["results"]
    slowest = sorted(results, key=lambda result: -result["execution_time"])[:count]
    # unique_id: <type>.<project>.<name>, and for a test a hash after the name.
    return [(result["unique_id"].split(".")[2], round(result["execution_time"], 1)) for result in slowest]


def rows_digest(spark: "SparkSession", table: str, left_out: tuple[str, ...] = ()) -> tuple[int, int]:
    """(rows, an order-free digest of them), the build stamps and the columns `left_out` left out."""
    columns = [name for name in spark.table(table).columns if name not in (*BUILD_STAMPS, *left_out)]
    quoted = ", ".join(f"`{name}`" for name in columns)
    row = spark.sql(f"select count(*), sum(cast(xxhash64({quoted}) as decimal(38, 0))) from {table}").first()
    assert row is not None
    return int(row[0]), int(row[1] or 0)


def jvm_cpu_seconds(spark: "SparkSession") -> float:
    """User and system CPU time the session's JVM has used (Linux's /proc)."""
    pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def jobs_run(spark: "SparkSession") -> int:
    """Spark jobs the session has run (the scheduler's count: the status tracker keeps only the newest)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().numTotalJobs())
