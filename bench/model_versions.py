"""One model built at two versions of its SQL, on the same landed records, in one SparkSession.

    python bench/model_versions.py --baseline <git ref> [--model int_records_parsed_unbound]
                                   [--events 300000] [--keys 30000] [--redelivered 0.02] [--repeat 2]
                                   [--driver-memory 4g] [--changes-column <column> ...]

What a change to one model's SQL (its file, or the macros it calls) buys, measured against the
model as it was at `--baseline` (a commit of this checkout): both versions read the same input
tables and write the same table, and must write the same rows, but for the columns named by
`--changes-column` (a change that means to alter what a column holds). It generates the Debezium
PostgreSQL stream (kcat lines with the JsonConverter schema) and lands a share of its records a
second time in a file of their own, so that records delivered twice take their own path through
the model. Then, in one SparkSession:

- a `dbt run` of everything the model reads (not timed);
- `--repeat` rounds, each a `--full-refresh` of the model alone at the baseline, then at this
  checkout's SQL (two copies of the project, differing in the model's file and the macros), each
  timed;
- a digest of every row the two versions wrote (build stamps aside), which must be equal.

It prints each version's best time and the ratio this checkout / baseline.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from _session import product_session, scratch_folder
from dbt_runs import dbt_command, rows_digest

# This checkout's code, and the generator, which lives only in the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cdc_dbt.project_files import copy_dbt_project
from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from generator import generate

SCHEMA = "bench_model_versions"


def model_path(model: str) -> Path:
    [path] = (PACKAGE_PROJECT_DIR / "models").rglob(f"{model}.sql")
    return path.relative_to(PACKAGE_PROJECT_DIR)


def at_baseline(project: Path, model: str, ref: str) -> None:
    """Replace the model's SQL and every macro in `project` with their text at commit `ref`."""
    path = model_path(model)
    text = subprocess.run(
        ["git", "show", f"{ref}:{path}"], cwd=PACKAGE_PROJECT_DIR, capture_output=True, text=True, check=True
    ).stdout
    (project / path).write_text(text)
    shutil.rmtree(project / "macros")
    archive = subprocess.run(
        ["git", "archive", ref, "macros"], cwd=PACKAGE_PROJECT_DIR, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(project)], input=archive.stdout, check=True)


def land_again(landing: Path, share: float) -> int:
    """Land every n-th record a second time, in one new file (a re-delivery); return how many."""
    step = round(1 / share) if share > 0 else 0
    landed = 0
    again = 0
    # Line by line: at 1M events the landing is about 5 GB.
    with (landing / "again.json").open("w") as copies:
        for file in sorted(landing.rglob("part-*.json")):
            with file.open() as lines:
                for line in lines:
                    if step and landed % step == 0:
                        copies.write(line)
                        again += 1
                    landed += 1
    return again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the commit whose SQL of the model is the baseline")
    parser.add_argument("--model", default="int_records_parsed_unbound")
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--keys", type=int, default=30_000)
    parser.add_argument("--redelivered", type=float, default=0.02, help="share of the records landed again")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument(
        "--changes-column",
        action="append",
        default=[],
        help="a column the change means to alter: left out of the rows compared (repeatable)",
    )
    arguments = parser.parse_args()
    # In local mode the executors live in the driver: this is all the heap the builds have.
    os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory {arguments.driver_memory} pyspark-shell"

    with scratch_folder("cdc-bench-model-versions-") as work:
        landing = work / "landing"
        print(f"generating {arguments.events:,} events ...", flush=True)
        generate(landing, events=arguments.events, keys=arguments.keys, seed=11, partitions=3)
        redelivered = land_again(landing, arguments.redelivered)
        current = copy_dbt_project(PACKAGE_PROJECT_DIR, work / "current")
        baseline = copy_dbt_project(PACKAGE_PROJECT_DIR, work / "baseline")
        at_baseline(baseline, arguments.model, arguments.baseline)
        with product_session(landing, work) as spark:
            print(f"building what {arguments.model} reads (not timed) ...", flush=True)
            # int_records_parsed too: the build's closing summary (on-run-end) reads it.
            upstream = ("--select", f"+{arguments.model}", "+int_records_parsed")
            dbt_command("run", landing, work / "target-current", SCHEMA, *upstream, project_dir=current)
            table = f"{SCHEMA}.{arguments.model}"
            seconds: dict[str, list[float]] = {"baseline": [], "current": []}
            digests: dict[str, tuple[int, int]] = {}
            for _ in range(arguments.repeat):
                for version, project in (("baseline", baseline), ("current", current)):
                    options = ("--select", arguments.model, "--full-refresh")
                    # A target folder per project: dbt's partial parsing keeps one project's state there.
                    target = work / f"target-{version}"
                    seconds[version].append(dbt_command("run", landing, target, SCHEMA, *options, project_dir=project))
                    digests[version] = rows_digest(spark, table, tuple(arguments.changes_column))

    best = {version: min(times) for version, times in seconds.items()}
    print(f"\n{arguments.model}, {arguments.events:,} events, {redelivered:,} records landed twice")
    print(f"baseline ({arguments.baseline}): {best['baseline']:7.1f} s   (each: {json.dumps(seconds['baseline'])})")
    print(f"this checkout:       {best['current']:7.1f} s   (each: {json.dumps(seconds['current'])})")
    print(f"this checkout / baseline: {best['current'] / best['baseline']:.2f}")
    left_out = f", compared without {', '.join(arguments.changes_column)}" if arguments.changes_column else ""
    print(f"rows written (each version): {digests['current'][0]:,}{left_out}")
    if digests["baseline"] != digests["current"]:
        raise SystemExit(f"the two versions wrote different rows: {digests}")


if __name__ == "__main__":
    main()
