"""The parsing core at two versions of its code, on the same landed lines, one process at a time.

    python bench/core_versions.py --baseline <git ref> [--events 100000] [--keys 10000] [--rounds 3]

What a change to the pure-Python parsing core (`udfs/`) buys per record, measured against the core
as it was at `--baseline` (a commit of this checkout, checked out into a temporary git worktree).
It generates the Debezium PostgreSQL stream (kcat lines with the JsonConverter schema), then runs
`--rounds` rounds, each a child process per version (baseline, then this checkout; the child
imports `udfs` from that version's tree), in which, on every line:

- `parse_kcat_line(line)`, timed over all lines;
- `parse_record(key, payload, partition, offset, topic)` of each landed record, timed over all.

Each child also digests every result it made; the two versions' digests must be equal (the change
keeps every output), or the script exits non-zero. It prints each version's best µs per line and
per record, and the ratios this checkout / baseline. One process at a time, so no Spark: this is
the Python work a UDF call does, without the crossing to and from the JVM.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def measure(lines_file: Path) -> dict[str, object]:
    """In a child: time the core importable here over the lines; digest what it returns."""
    from udfs.landing import parse_kcat_line
    from udfs.records import parse_record

    lines = lines_file.read_text(encoding="utf-8").splitlines()
    started = time.perf_counter()
    landed = [parse_kcat_line(line) for line in lines]
    kcat_seconds = time.perf_counter() - started
    records = [record for record in landed if record.reason is None]
    started = time.perf_counter()
    parsed = [
        parse_record(record.key, record.payload, record.partition, record.offset, record.topic)  # type: ignore[arg-type]
        for record in records
    ]
    record_seconds = time.perf_counter() - started
    digest = hashlib.sha256(repr((landed, parsed)).encode()).hexdigest()
    return {
        "kcat_us": kcat_seconds / len(lines) * 1e6,
        "record_us": record_seconds / len(records) * 1e6,
        "lines": len(lines),
        "records": len(records),
        "digest": digest,
    }


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
    from cdc_dbt.generator import generate

    with tempfile.TemporaryDirectory(prefix="cdc-bench-core-versions-") as scratch:
        work = Path(scratch)
        print(f"generating {arguments.events:,} events ...", flush=True)
        generate(work / "landing", events=arguments.events, keys=arguments.keys, seed=11)
        lines_file = work / "lines.jsonl"
        with lines_file.open("w", encoding="utf-8") as lines:
            for path in sorted((work / "landing").rglob("*.json")):
                lines.write(path.read_text(encoding="utf-8"))
        baseline_tree = work / "baseline"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(baseline_tree), arguments.baseline],
            cwd=REPOSITORY,
            check=True,
            capture_output=True,
        )
        try:
            results: dict[str, list[dict[str, object]]] = {"baseline": [], "current": []}
            for round_number in range(arguments.rounds):
                for version, tree in (("baseline", baseline_tree), ("current", REPOSITORY)):
                    results[version].append(run_child(tree, lines_file))
                print(f"round {round_number + 1} of {arguments.rounds} done", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline_tree)], cwd=REPOSITORY, check=True)

    first = results["current"][0]
    print(f"\n{first['lines']:,} kcat lines, {first['records']:,} records parsed")
    best = {
        version: {
            measure_name: min(float(run[measure_name]) for run in runs) for measure_name in ("kcat_us", "record_us")
        }  # type: ignore[arg-type]
        for version, runs in results.items()
    }
    for measure_name, label in (
        ("kcat_us", "parse_kcat_line, µs per line"),
        ("record_us", "parse_record, µs per record"),
    ):
        baseline_us, current_us = best["baseline"][measure_name], best["current"][measure_name]
        print(f"{label:32} baseline ({arguments.baseline}) {baseline_us:6.2f}   this checkout {current_us:6.2f}"
              f"   this checkout / baseline {current_us / baseline_us:.2f}")  # fmt: skip
    digests = {str(run["digest"]) for runs in results.values() for run in runs}
    if len(digests) != 1:
        print("the two versions made different results", file=sys.stderr)
        return 1
    print("every result the same in both versions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
