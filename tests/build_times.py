"""The time of each in-process dbt build of a test run, reported at its end (a slow suite shows
which builds, and which part of them). In a run on several pytest-xdist workers, each worker hands
its builds to the controller, which reports them all (tests/conftest.py)."""

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass
class BuildTime:
    """Where one `dbt build` spent its time: its wall time, and the execution time of its models,
    data tests and unit tests, each summed over its nodes (they overlap on several threads)."""

    schema: str
    wall: float
    models: float
    data_tests: float
    unit_tests: float
    nodes: int
    worker: str = ""
    """The pytest-xdist worker that ran it (gw0, gw1, ...), or empty in a run without workers."""


BUILD_TIMES: list[BuildTime] = []
WORKER_OUTPUT_KEY = "build_times"


def build_time(schema: str, wall: float, run_results: Path) -> BuildTime:
    results = json.loads(run_results.read_text())["results"] if run_results.exists() else []
    by_type = {"model": 0.0, "test": 0.0, "unit_test": 0.0}
    for result in results:
        resource_type = result["unique_id"].split(".", 1)[0]
        if resource_type in by_type:
            by_type[resource_type] += result["execution_time"]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return BuildTime(schema, wall, by_type["model"], by_type["test"], by_type["unit_test"], len(results), worker)


def as_worker_output() -> list[dict[str, Any]]:
    return [asdict(build) for build in BUILD_TIMES]


def add_worker_output(output: list[dict[str, Any]]) -> None:
    BUILD_TIMES.extend(BuildTime(**build) for build in output)


def report_lines() -> list[str]:
    """The table of every build, then their total."""
    if not BUILD_TIMES:
        return []
    columns = zip(*[(b.wall, b.models, b.data_tests, b.unit_tests, b.nodes) for b in BUILD_TIMES], strict=True)
    total = BuildTime("(all)", *(sum(column) for column in columns))
    return [
        f"{'schema':<28}{'wall':>8}{'models':>8}{'data':>8}{'unit':>8}{'nodes':>7}  worker",
        *(
            f"{build.schema:<28}{build.wall:>8.1f}{build.models:>8.1f}{build.data_tests:>8.1f}"
            f"{build.unit_tests:>8.1f}{build.nodes:>7}  {build.worker}"
            for build in [*BUILD_TIMES, total]
        ),
    ]
