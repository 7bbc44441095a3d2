"""The parsing core at two versions of its code, on the same landed lines, one process at a time.

    python bench/core_versions.py --baseline <git ref> [--events 100000] [--keys 10000] [--rounds 3]

What a change to the pure-Python parsing core (`udfs/`) buys per record, measured against the core
as it was at `--baseline` (a commit of this checkout, checked out into a temporary git worktree).
It generates the Debezium PostgreSQL stream (kcat lines with the JsonConverter schema), then runs
`--rounds` rounds, each a child process per version (baseline, then this checkout; the child
imports `udfs` from that version's tree), in which, on every line:

- `parse_kcat_line(line)`, timed over all lines;
- `parse_record(key, payload, partition, offset, topic)` of each landed record, timed over all;
- the same two as the Python worker runs them for `cdc_parse_kcat_line` and `cdc_parse_record`
  (`udfs.spark.over_arrow_batches`: Arrow columns in, one Arrow column out), timed over all;
  `-` where the version has no such functions.

Lines go in batches of 10,000, Spark's default Arrow batch; each batch of the first two is timed
under the garbage-collection policy the version's worker keeps for a batch
(`udfs.spark.collection_paused`, where the version has one; the third and fourth keep it inside).

Each child also digests every result it made; the two versions' digests must be equal (the change
keeps every output), or the script exits non-zero. It prints each version's best µs per line and
per record, and the ratios this checkout / baseline. One process at a time, so no Spark: this is
the Python work a UDF call does, without the crossing to and from the JVM.
"""

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _session import baseline_worktree

REPOSITORY = Path(__file__).resolve().parents[1]
BATCH_ROWS = 10_000
"""Rows per Arrow batch, as Spark sends them (`spark.sql.execution.arrow.maxRecordsPerBatch`)."""


def measure(lines_file: Path) -> dict[str, object]:
    """In a child: time the core importable here over the lines; digest what it returns.

    Batch by batch, each batch's results dropped once digested, as a Python worker holds them: kept
    for all lines, the records make each garbage collection walk a heap of hundreds of thousands of
    objects, a cost the worker never pays.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from udfs import spark as registration
    from udfs.landing import parse_kcat_line
    from udfs.records import parse_record

    # The worker's policy for a batch (the collector paused), where this version has one.
    batch_policy = getattr(registration, "collection_paused", contextlib.nullcontext)
    kcat_batch, record_batch = None, None
    if hasattr(registration, "over_arrow_batches"):
        # As registered: the row function and result type of each UDF.
        kcat_batch = registration.over_arrow_batches(*registration.FUNCTIONS["cdc_parse_kcat_line"])
        record_batch = registration.over_arrow_batches(*registration.FUNCTIONS["cdc_parse_record"])
    lines = lines_file.read_text(encoding="utf-8").splitlines()
    seconds = dict.fromkeys(("kcat", "record", "kcat_batch", "record_batch"), 0.0)
    digest, batch_digest = hashlib.sha256(), hashlib.sha256()
    record_count = 0
    for start in range(0, len(lines), BATCH_ROWS):
        batch_lines = lines[start : start + BATCH_ROWS]
        with batch_policy():
            started = time.perf_counter()
            landed = [parse_kcat_line(line) for line in batch_lines]
            seconds["kcat"] += time.perf_counter() - started
        records = [record for record in landed if record.reason is None]
        with batch_policy():
            started = time.perf_counter()
            parsed = [
                parse_record(record.key, record.payload, record.partition, record.offset, record.topic)  # type: ignore[arg-type]
                for record in records
            ]
            seconds["record"] += time.perf_counter() - started
        digest.update(repr((landed, parsed)).encode())
        record_count += len(records)
        del landed, records, parsed
        if kcat_batch is None or record_batch is None:
            continue
        line_column = pa.array(batch_lines, pa.string())
        started = time.perf_counter()
        landed_column = kcat_batch(line_column)
        seconds["kcat_batch"] += time.perf_counter() - started
        # `cdc_parse_record`'s arguments as the model passes them: the fields of each landed record.
        records_column = landed_column.filter(pc.is_null(landed_column.field("reason")))
        arguments = [records_column.field(name) for name in ("key", "payload", "partition", "offset", "topic")]
        started = time.perf_counter()
        parsed_column = record_batch(*arguments)
        seconds["record_batch"] += time.perf_counter() - started
        batch_digest.update(repr((landed_column.to_pylist(), parsed_column.to_pylist())).encode())
    measures = {
        "kcat_us": seconds["kcat"] / len(lines) * 1e6,
        "record_us": seconds["record"] / record_count * 1e6,
        "lines": len(lines),
        "records": record_count,
        "digest": digest.hexdigest(),
    }
    if kcat_batch is not None:
        measures |= {
            "kcat_batch_us": seconds["kcat_batch"] / len(lines) * 1e6,
            "record_batch_us": seconds["record_batch"] / record_count * 1e6,
            "batch_digest": batch_digest.hexdigest(),
        }
    return measures


def run_child(tree: Path, lines_file: Path) -> dict[str, object]:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    output = subprocess.run(
        [sys.executable, __file__, "--child", str(lines_file)],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    ).stdout
    result: dict[str, object] = json.loads(output)
    return result


MEASURES = (
    ("kcat_us", "parse_kcat_line, µs per line"),
    ("record_us", "parse_record, µs per record"),
    ("kcat_batch_us", "cdc_parse_kcat_line batches, µs per line"),
    ("record_batch_us", "cdc_parse_record batches, µs per record"),
)


def best_of(runs: list[dict[str, object]], measure_name: str) -> float | None:
    """The least of a measure over a version's runs; None where that version has no such measure."""
    values = [float(run[measure_name]) for run in runs if measure_name in run]  # type: ignore[arg-type]
    return min(values) if values else None


def us_text(value: float | None) -> str:
    return f"{value:6.2f}" if value is not None else "     -"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="the commit whose udfs/ is the baseline")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(measure(arguments.child)))
        return 0
    if not arguments.baseline:
        parser.error("--baseline is required")

    sys.path.insert(0, str(REPOSITORY))
    from generator import generate

    with tempfile.TemporaryDirectory(prefix="cdc-bench-core-versions-") as scratch:
        work = Path(scratch)
        print(f"generating {arguments.events:,} events ...", flush=True)
        generate(work / "landing", events=arguments.events, keys=arguments.keys, seed=11)
        lines_file = work / "lines.jsonl"
        with lines_file.open("w", encoding="utf-8") as lines:
            for path in sorted((work / "landing").rglob("*.json")):
                lines.write(path.read_text(encoding="utf-8"))
        with baseline_worktree(arguments.baseline, work / "baseline") as baseline_tree:
            results: dict[str, list[dict[str, object]]] = {"baseline": [], "current": []}
            for round_number in range(arguments.rounds):
                for version, tree in (("baseline", baseline_tree), ("current", REPOSITORY)):
                    results[version].append(run_child(tree, lines_file))
                print(f"round {round_number + 1} of {arguments.rounds} done", flush=True)

    first = results["current"][0]
    print(f"\n{first['lines']:,} kcat lines, {first['records']:,} records parsed")
    for measure_name, label in MEASURES:
        baseline_us, current_us = (best_of(runs, measure_name) for runs in (results["baseline"], results["current"]))
        ratio = "-" if baseline_us is None or current_us is None else f"{current_us / baseline_us:.2f}"
        print(f"{label:46} baseline ({arguments.baseline}) {us_text(baseline_us)}   this checkout {us_text(current_us)}"
              f"   this checkout / baseline {ratio}")  # fmt: skip
    digests = {str(run["digest"]) for runs in results.values() for run in runs}
    batch_digests = {str(run["batch_digest"]) for runs in results.values() for run in runs if "batch_digest" in run}
    if len(digests) != 1 or len(batch_digests) > 1:
        print("the two versions made different results", file=sys.stderr)
        return 1
    print("every result the same in both versions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
