"""What the benchmarks that build in their own process share: a scratch folder, a worktree of a
baseline commit, and the product's own SparkSession over it (`cdc_dbt.session.build_session`: the
UDFs registered, the embedded local Spark, the packaged dbt project), stopped and removed when the
benchmark ends, failed or not.

cdc_dbt is imported when a session starts, not before: a benchmark's parent process, which only
starts children, never loads pyspark.
"""

import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdc_dbt.settings import Settings


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A new folder under the system's temporary one, removed with all it holds at the end."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def baseline_worktree(ref: str, tree: Path) -> Iterator[Path]:
    """Commit `ref` of this checkout checked out at `tree` (a git worktree), removed at the end."""
    checkout = Path(__file__).resolve().parents[1]
    added = ["git", "worktree", "add", "--detach", str(tree), ref]
    subprocess.run(added, cwd=checkout, check=True, capture_output=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=checkout, check=True)


def bench_settings(landing: Path, work: Path) -> "Settings":
    """A benchmark build's settings: the packaged project over `landing`, its warehouse in `work`,
    the embedded local Spark."""
    from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings

    return Settings(PACKAGE_PROJECT_DIR, landing, work / "warehouse", None)


@contextmanager
def product_session(landing: Path, work: Path, spark_conf: Mapping[str, str] | None = None) -> Iterator["SparkSession"]:
    """cdc-dbt's SparkSession for `bench_settings(landing, work)` (with `spark_conf` added),
    stopped at the end."""
    from cdc_dbt.session import build_session

    spark = build_session(bench_settings(landing, work), spark_conf)
    try:
        yield spark
    finally:
        spark.stop()
