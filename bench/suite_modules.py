"""Test modules of the suite at a baseline commit and at this checkout: what a change to the tests,
or to what they run, costs or saves the suite, in the currency it pays.

    .venv/bin/python bench/suite_modules.py --baseline <git ref> [--repeat 2] TEST [TEST ...]

The suite runs on two pytest workers whose two cores stay busy to its end (docs/development.md),
so its time follows the CPU its tests use, not their wall time on an idle machine. Each round runs
pytest once per version on the TESTs (files or node ids), in one process, the order swapped every
round: the baseline in a `git worktree` of its commit, with `../shared` beside it as a checkout has
it; this checkout as it is. Both run on this checkout's virtual environment (a baseline whose
pyproject.toml pins other versions is measured on these), with PYTHONPATH naming the version's
tree, so that the `cdc-dbt` processes tests start run that version too. Measured: the machine's busy
CPU-seconds (/proc/stat: every process, the JVMs and servers tests start included) and the wall
time. Prints every round, then each version's round of least CPU and the ratios this checkout /
baseline. Every run must pass.
"""

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from _session import baseline_worktree, scratch_folder

CHECKOUT = Path(__file__).resolve().parents[1]
SHARED = CHECKOUT.parent / "shared"


@dataclass(frozen=True)
class RunCost:
    busy_cpu: float
    """CPU-seconds the whole machine spent busy (user, nice, system, interrupts)."""
    wall: float


def busy_cpu_seconds() -> float:
    """The machine's busy time since boot, from the `cpu` line of /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(field) for field in stat.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def timed_pytest(tree: Path, tests: list[str], log: Path) -> RunCost:
    """pytest of `tests` in `tree`, one process, its output in `log`; fails unless every test passes."""
    environment = {**os.environ, "PYTHONPATH": str(tree), "CDC_REQUIRE_CORPUS": "1"}
    busy, started = busy_cpu_seconds(), time.perf_counter()
    with log.open("w") as output:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
            cwd=tree, env=environment, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    cost = RunCost(busy_cpu_seconds() - busy, time.perf_counter() - started)
    if run.returncode != 0:
        raise SystemExit(f"pytest failed in {tree} (exit {run.returncode}):\n{log.read_text()[-3000:]}")
    return cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="a commit of this checkout")
    parser.add_argument("--repeat", type=int, default=2, help="rounds (default 2)")
    parser.add_argument("tests", nargs="+", help="test files or node ids, relative to the checkout")
    args = parser.parse_args()

    costs: dict[str, list[RunCost]] = {"baseline": [], "checkout": []}
    with scratch_folder("cdc-dbt-bench-suite-") as folder:
        if SHARED.is_dir():  # beside the baseline as beside a checkout: the corpus tests read it
            (folder / "shared").symlink_to(SHARED, target_is_directory=True)
        with baseline_worktree(args.baseline, folder / "baseline") as tree:
            trees = {"baseline": tree, "checkout": CHECKOUT}
            for round_number in range(1, args.repeat + 1):
                order = ["baseline", "checkout"] if round_number % 2 else ["checkout", "baseline"]
                for version in order:
                    cost = timed_pytest(trees[version], args.tests, folder / f"{version}-{round_number}.log")
                    costs[version].append(cost)
                    label = args.baseline if version == "baseline" else "this checkout"
                    print(
                        f"round {round_number}, {label:<14}: busy CPU {cost.busy_cpu:7.1f} s, wall {cost.wall:6.1f} s"
                    )

    best = {version: min(runs, key=lambda cost: cost.busy_cpu) for version, runs in costs.items()}
    base, checkout = best["baseline"], best["checkout"]
    print(f"\n{' '.join(args.tests)}")
    print(f"the round of least busy CPU of {args.repeat}: busy CPU s, wall s")
    print(f"  {args.baseline:<14}{base.busy_cpu:9.1f}{base.wall:9.1f}")
    print(f"  {'this checkout':<14}{checkout.busy_cpu:9.1f}{checkout.wall:9.1f}")
    print(f"  {'ratio':<14}{checkout.busy_cpu / base.busy_cpu:9.2f}{checkout.wall / base.wall:9.2f}")


if __name__ == "__main__":
    main()
