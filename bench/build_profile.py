"""Where a cold build's time goes, node by node: a profile read from Spark's event log.

    python bench/build_profile.py [--events 1000000] [--keys 100000] [--threads 1] [--top 25]

Generates the stream `versus_native.py` measures (generator: Debezium PostgreSQL with the
converter's schema, seed 11, 3 partitions), then runs the project's models cold (`dbt run`, no
example marts) in a new product session with Spark's event log on. dbt runs on `--threads`
threads, one by default, so that every Spark stage falls in one node's time: a stage belongs
to the node whose run (compile to end, from dbt's run_results.json) holds its submission.

Prints, per node (model or hook) in the order dbt ran them, its seconds and, from the event log:

- `in stages`: the seconds during which at least one of its Spark stages ran; the rest of the
  node's time is the driver's (dbt, planning, the metastore, Delta's log, waiting on nothing);
- `task s`: the seconds its tasks ran, summed over tasks (up to cores x `in stages`);
- the stages and tasks it ran; rows and MB read from files, written to files, and shuffled
  (written to the shuffle by one stage, read by the next).

Then the totals, and the `--top` stages that ran longest, each with its node.
"""

import argparse
import json
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from _session import product_session, scratch_folder
from dbt_runs import dbt_run

# This checkout's code, and the generator, which lives only in the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator import generate

SCHEMA = "bench_profile"
BETWEEN_NODES = "(between nodes)"


@dataclass
class Stage:
    stage_id: int
    attempt: int
    name: str
    submitted_ms: int
    completed_ms: int
    tasks: int = 0
    task_ms: int = 0
    rows_read: int = 0
    bytes_read: int = 0
    rows_written: int = 0
    bytes_written: int = 0
    shuffle_bytes_written: int = 0
    shuffle_bytes_read: int = 0

    @property
    def seconds(self) -> float:
        return (self.completed_ms - self.submitted_ms) / 1000


@dataclass
class NodeRun:
    name: str
    started_ms: int
    completed_ms: int
    stages: list[Stage] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return (self.completed_ms - self.started_ms) / 1000

    def seconds_in_stages(self) -> float:
        """The length of the union of its stages' intervals: when at least one of them ran."""
        covered, end = 0, 0
        for stage in sorted(self.stages, key=lambda stage: stage.submitted_ms):
            start = max(stage.submitted_ms, end)
            if stage.completed_ms > start:
                covered += stage.completed_ms - start
                end = stage.completed_ms
        return covered / 1000

    def total(self, metric: str) -> int:
        return sum(getattr(stage, metric) for stage in self.stages)


def epoch_ms(timestamp: str) -> int:
    """dbt's timing stamps (ISO 8601, UTC) as epoch milliseconds, as the event log counts."""
    return round(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)


def node_runs(run_results: Path) -> list[NodeRun]:
    """Each node of the run, from its compile's start to its execution's end, in the order they ran."""
    runs = []
    for result in json.loads(run_results.read_text())["results"]:
        timings = result["timing"]
        if timings:
            runs.append(
                NodeRun(
                    result["unique_id"].split(".")[-1],
                    min(epoch_ms(timing["started_at"]) for timing in timings),
                    max(epoch_ms(timing["completed_at"]) for timing in timings),
                )
            )
    return sorted(runs, key=lambda run: run.started_ms)


def stages_of(event_log: Path) -> list[Stage]:
    """Every completed stage attempt of the log, with its tasks' metrics summed."""
    stages: dict[tuple[int, int], Stage] = {}
    task_ends: list[dict[str, Any]] = []
    with event_log.open() as lines:
        for line in lines:
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerStageCompleted":
                info = event["Stage Info"]
                if "Submission Time" in info and "Completion Time" in info:
                    key = (info["Stage ID"], info["Stage Attempt ID"])
                    stages[key] = Stage(*key, info["Stage Name"], info["Submission Time"], info["Completion Time"])
            elif kind == "SparkListenerTaskEnd":
                task_ends.append(event)
    for event in task_ends:
        stage = stages.get((event["Stage ID"], event["Stage Attempt ID"]))
        metrics = event.get("Task Metrics")
        if stage is None or not metrics:
            continue
        stage.tasks += 1
        stage.task_ms += metrics["Executor Run Time"]
        stage.rows_read += metrics["Input Metrics"]["Records Read"]
        stage.bytes_read += metrics["Input Metrics"]["Bytes Read"]
        stage.rows_written += metrics["Output Metrics"]["Records Written"]
        stage.bytes_written += metrics["Output Metrics"]["Bytes Written"]
        stage.shuffle_bytes_written += metrics["Shuffle Write Metrics"]["Shuffle Bytes Written"]
        shuffle_read = metrics["Shuffle Read Metrics"]
        stage.shuffle_bytes_read += shuffle_read["Remote Bytes Read"] + shuffle_read["Local Bytes Read"]
    return sorted(stages.values(), key=lambda stage: stage.submitted_ms)


def attribute(stages: list[Stage], runs: list[NodeRun]) -> list[NodeRun]:
    """Each stage added to the run whose time holds its submission; the others to BETWEEN_NODES."""
    between = NodeRun(BETWEEN_NODES, 0, 0)
    for stage in stages:
        holder = next((run for run in runs if run.started_ms <= stage.submitted_ms <= run.completed_ms), between)
        holder.stages.append(stage)
    return [*runs, between] if between.stages else runs


def megabytes(count: int) -> str:
    return f"{count / 1e6:,.1f}"


def print_profile(runs: list[NodeRun], wall: float, top: int) -> None:
    header = (
        f"{'node':<44}{'s':>7}{'in stages':>10}{'task s':>8}{'stages':>7}{'tasks':>7}"
        f"{'rows read':>12}{'MB read':>9}{'rows written':>13}{'MB written':>11}{'MB shuffled':>12}"
    )
    print(header)
    for run in runs:
        seconds = "" if run.name == BETWEEN_NODES else f"{run.seconds:.1f}"
        print(
            f"{run.name:<44}{seconds:>7}{run.seconds_in_stages():>10.1f}{run.total('task_ms') / 1000:>8.1f}"
            f"{len(run.stages):>7}{run.total('tasks'):>7}{run.total('rows_read'):>12,}"
            f"{megabytes(run.total('bytes_read')):>9}{run.total('rows_written'):>13,}"
            f"{megabytes(run.total('bytes_written')):>11}{megabytes(run.total('shuffle_bytes_written')):>12}"
        )
    nodes = [run for run in runs if run.name != BETWEEN_NODES]
    in_nodes = sum(run.seconds for run in nodes)
    in_stages = sum(run.seconds_in_stages() for run in nodes)
    task_seconds = sum(run.total("task_ms") for run in runs) / 1000
    print(
        f"\ndbt run {wall:.1f} s; its nodes {in_nodes:.1f} s, of which {in_stages:.1f} s with a Spark stage"
        f" running ({in_stages / in_nodes:.0%}) and {in_nodes - in_stages:.1f} s without (the driver's:"
        f" dbt, planning, the metastore, Delta's log); tasks {task_seconds:.1f} core-seconds in all;"
        f" {sum(len(run.stages) for run in runs)} stages"
    )
    stages = sorted(((stage, run.name) for run in runs for stage in run.stages), key=lambda pair: -pair[0].seconds)
    print(f"\nthe {top} longest stages:")
    print(f"{'s':>7}{'task s':>8}{'tasks':>7}{'rows read':>12}{'MB shuffled':>12}  node: stage")
    for stage, node in stages[:top]:
        print(
            f"{stage.seconds:>7.1f}{stage.task_ms / 1000:>8.1f}{stage.tasks:>7}{stage.rows_read:>12,}"
            f"{megabytes(stage.shuffle_bytes_written):>12}  {node}: {stage.name[:60]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--top", type=int, default=25)
    arguments = parser.parse_args()
    with scratch_folder("cdc-bench-profile-") as work:
        landing, events_dir, target = work / "landing", work / "events", work / "target"
        generate(landing / "generated", events=arguments.events, keys=arguments.keys, seed=11, partitions=3)
        events_dir.mkdir()
        spark_conf = {
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": events_dir.as_uri(),
            "spark.eventLog.compress": "false",
            "spark.eventLog.rolling.enabled": "false",  # one file (Spark 4 rolls them by default)
        }
        with product_session(landing, work, spark_conf) as spark:
            wall = dbt_run(landing, target, SCHEMA, "--threads", str(arguments.threads))
            application = spark.sparkContext.applicationId
        [event_log] = [path for path in events_dir.iterdir() if path.name.startswith(application)]
        runs = attribute(stages_of(event_log), node_runs(target / "run_results.json"))
        print(f"{arguments.events:,} events over {arguments.keys:,} keys, dbt on {arguments.threads} thread(s)\n")
        print_profile(runs, wall, arguments.top)


if __name__ == "__main__":
    main()
