"""A cold `cdc-dbt build` of the demo on 1, 2 and 4 dbt threads, in one run.

    python bench/build_threads.py [--repeat 2]

Each build is a separate `cdc-dbt build` process into a new warehouse, as a user runs it (the
product's Spark settings, the demo's marts, data tests included); the thread counts take turns, so
a change in the machine's load falls on all of them. Prints the best wall time of each and its
ratio to one thread (the profile's default before 2026-11-25).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

CDC_DBT = str(Path(sys.executable).parent / "cdc-dbt")
THREADS = (1, 2, 4)


def cold_build(threads: int, folder: Path) -> float:
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith(("CDC_", "DBT_", "SPARK_CONF"))},
        "CDC_LANDING_DIR": str(PACKAGE_PROJECT_DIR / "demo" / "landing"),
        "CDC_WAREHOUSE_DIR": str(folder / "warehouse"),
    }
    args = [CDC_DBT, "build", "--threads", str(threads), "--vars", "{example_marts: true}",
            "--target-path", str(folder / "target")]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(args, cwd=PACKAGE_PROJECT_DIR, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"the build on {threads} threads failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    options = parser.parse_args()
    times: dict[int, list[float]] = {threads: [] for threads in THREADS}
    for round_number in range(options.repeat):
        for threads in THREADS:
            seconds = cold_build(threads, Path(tempfile.mkdtemp(prefix="cdc-dbt-bench-threads-")))
            times[threads].append(seconds)
            print(f"round {round_number + 1}: {threads} thread(s) {seconds:.1f} s", flush=True)
    print(f"\nbest of {options.repeat}, seconds\n")
    print(f"{'threads':<10}{'build':>9}{'vs 1 thread':>14}")
    for threads in THREADS:
        print(f"{threads:<10}{min(times[threads]):>9.1f}{min(times[threads]) / min(times[1]):>13.2f}x")


if __name__ == "__main__":
    main()
