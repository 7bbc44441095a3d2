"""The suite's pytest-xdist groups (tests/conftest.py), on real workers: every test of a module runs
on one worker, under its group's name. A worker collects with `dist` read as "no" (only the
controller sees "loadgroup"), so a hook that asked the controller's option grouped nothing there,
and modules, their fixtures and the demo's build were split across both workers."""

import re
import subprocess
import sys
from collections import defaultdict

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

MODULES = ("tests/unit/test_masks.py", "tests/unit/test_qlik.py", "tests/unit/test_positions.py")
RESULT_LINE = re.compile(r"^\[(gw\d+)\] \[ *\d+%\] PASSED ([^:]+)::.*@(\S+) *$", re.MULTILINE)
"""A worker's line of `-v`: its worker, the test's file, and the group at the end of its id."""


def test_each_module_runs_on_one_worker_under_its_group() -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder",
         "-v", "-p", "no:cacheprovider", *MODULES],
        cwd=PACKAGE_PROJECT_DIR, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    results = RESULT_LINE.findall(ran.stdout)
    assert len(results) == ran.stdout.count(" PASSED "), "each test id ends in its group (@...)"
    workers_of: dict[str, set[str]] = defaultdict(set)
    groups_of: dict[str, set[str]] = defaultdict(set)
    for worker, path, group in results:
        workers_of[path].add(worker)
        groups_of[path].add(group)
    assert sorted(workers_of) == sorted(MODULES), ran.stdout[-3000:]
    assert {path: len(workers) for path, workers in workers_of.items()} == dict.fromkeys(MODULES, 1)
    assert dict(groups_of) == {path: {path.removesuffix(".py").replace("/", ".")} for path in MODULES}
