"""`SPARK_MASTER_URL`: the same build on a Spark standalone cluster gives the same tables.

A master and one two-core worker start on 127.0.0.1 from the pip pyspark. `cdc-dbt build` of the
bundled demo landing runs on it as a user runs it, a separate driver process with its own
warehouse and schema; every model, the marts included, must succeed. Then every table it wrote
(the incremental models: what the executors computed) is compared row for row with the embedded
Spark's build of the same landing (the suite's shared `demo_build`, whose data tests ran), each
key's newest generation, leaving out the columns that only say when a build ran. The marts are
views over these tables, computed by whichever session reads them, so equal tables give equal
marts. The tables are read from the cluster warehouse's Parquet files in this test's session: a
`cdc-dbt sql` to read them would start one more JVM for nothing. The demo is the smallest landing
that reaches every output table: PostgreSQL, Qlik and MongoDB marts, a truncate, transactions.

The parsing core must reach the executors the way it does on a real cluster, shipped by the driver
(`cdc_dbt.session._ship_udfs`). Here it could also arrive by accident: this checkout is installed
editable, so a `.pth` file in site-packages makes `udfs` importable by the venv's Python from any
folder, whatever its PYTHONPATH or cwd. The executors therefore run a wrapper around that Python
with `-S`: no site processing, so no editable finder; the venv's third-party packages (pyarrow,
pandas, orjson) stay on its path explicitly, as a cluster image would provide them. The test checks
the wrapper cannot import `udfs` on its own, that the executors did launch it, and that they fetched
the driver's `udfs.zip`: a build that succeeds under these conditions parsed with the shipped zip.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pyspark
import pytest
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as sf

from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings
from tests.integration.conftest import DEMO_LANDING, Build

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPARK_HOME = Path(pyspark.__file__).resolve().parent
CLI = [sys.executable, "-m", "cdc_dbt.cli"]
WORKERS = 1
"""One worker, so one executor: what the test proves (the driver ships the parsing core, executors
run every query) needs no second one, and on this 2-core machine a second executor JVM warming up
its own JIT made the test 28 s (22 %) slower, 127 s against 98 s."""
STARTUP_SECONDS = 120
BUILD_SECONDS = 600
CORE_TABLES = {"cdc_changes", "cdc_current", "cdc_history", "cdc_quarantine"}
TYPED_MARTS = {"customers_current", "customers_history", "employees_current", "reviews_current"}
BUILD_STAMPS = ("loaded_at", "parsed_at", "generation")
"""Columns that say when a build ran, not what it computed."""
KEY = ("source_db", "source_table", "row_key")


@dataclass
class Cluster:
    master_url: str
    status_url: str
    worker_dirs: list[Path]
    python: Path
    """The executors' Python (see the module docstring)."""
    python_launches: Path
    """One line per start of `python`: proof that the executors ran it."""

    def status(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.status_url, timeout=5) as response:
            status: dict[str, Any] = json.load(response)
            return status


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def isolated_python(folder: Path) -> tuple[Path, Path]:
    """A Python for the executors that finds pyspark, pyarrow, pandas and orjson but not `udfs`."""
    launches = folder / "python-launches.log"
    wrapper = folder / "python"
    site_packages = sysconfig.get_paths()["purelib"]
    wrapper.write_text(
        "#!/bin/sh\n"
        f'echo "$$ $*" >> "{launches}"\n'
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site_packages}" exec "{sys.executable}" -S "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, launches


def cluster_environment() -> dict[str, str]:
    """Master and workers: nothing of this checkout on any path, everything on 127.0.0.1."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYSPARK_", "PYTHON", "SPARK_", "CDC_")) and name != "VIRTUAL_ENV"
    }
    return {**environment, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}


def start(command: list[str], folder: Path, log: IO[str]) -> subprocess.Popen[bytes]:
    # Its own process group, so the finalizer stops the JVM and everything it started.
    return subprocess.Popen(
        command, cwd=folder, env=cluster_environment(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture
def spark_cluster(tmp_path: Path) -> Iterator[Cluster]:
    folder = tmp_path / "cluster"
    folder.mkdir()
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    master_port, master_ui = free_port(), free_port()
    python, launches = isolated_python(folder)
    cluster = Cluster(
        master_url=f"spark://127.0.0.1:{master_port}",
        status_url=f"http://127.0.0.1:{master_ui}/json/",
        worker_dirs=[folder / f"worker-{number}" for number in range(WORKERS)],
        python=python,
        python_launches=launches,
    )
    log_path = folder / "cluster.log"
    processes: list[subprocess.Popen[bytes]] = []
    with log_path.open("w") as log:
        try:
            processes.append(
                start(
                    [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                     "--port", str(master_port), "--webui-port", str(master_ui)],
                    folder, log,
                )
            )  # fmt: skip
            for worker_dir in cluster.worker_dirs:
                worker_dir.mkdir()
                processes.append(
                    start(
                        [spark_class, "org.apache.spark.deploy.worker.Worker", cluster.master_url,
                         "--host", "127.0.0.1", "--cores", "2", "--memory", "2g",
                         "--webui-port", str(free_port()), "--work-dir", str(worker_dir)],
                        worker_dir, log,
                    )
                )  # fmt: skip
            wait_for_workers(cluster, processes, log_path)
            yield cluster
        finally:
            for process in reversed(processes):
                stop(process)


def wait_for_workers(cluster: Cluster, processes: list[subprocess.Popen[bytes]], log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    alive = 0
    while time.monotonic() < deadline:
        exited = [process.args for process in processes if process.poll() is not None]
        assert not exited, f"cluster process exited: {exited}\n{log_path.read_text()[-3000:]}"
        try:
            alive = sum(worker["state"] == "ALIVE" for worker in cluster.status()["workers"])
        except OSError:
            alive = 0  # the master's web UI is not up yet
        if alive == WORKERS:
            return
        time.sleep(1)
    raise AssertionError(f"{alive} of {WORKERS} workers registered\n{log_path.read_text()[-3000:]}")


@dataclass
class Run:
    """`cdc-dbt <args>` running in its own driver process; stdout and stderr in files."""

    what: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def finish(self) -> str:
        """Wait for it; its stdout once it has succeeded."""
        try:
            self.process.wait(timeout=BUILD_SECONDS)
        finally:
            self.stop()
        output = self.stdout.read_text()
        assert self.process.returncode == 0, f"{self.what} failed:\n{output[-3000:]}\n{self.stderr.read_text()[-3000:]}"
        return output

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def cdc_dbt(what: str, args: list[str], folder: Path, extra: dict[str, str]) -> Run:
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("CDC_") and name not in ("SPARK_MASTER_URL", "PYSPARK_PYTHON")
    }
    environment |= {"CDC_LANDING_DIR": str(DEMO_LANDING), "CDC_SHUFFLE_PARTITIONS": "2", **extra}
    stdout, stderr = folder / f"{args[0]}.out", folder / f"{args[0]}.err"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen([*CLI, *args], cwd=PACKAGE_PROJECT_DIR, env=environment, stdout=out, stderr=err)
    return Run(what, process, stdout, stderr)


@dataclass
class Target:
    """One build: its warehouse, schema and dbt target folder."""

    folder: Path
    schema: str

    def build_args(self) -> list[str]:
        # Models only: the row-for-row comparison with the local build is this test's oracle, and the
        # data tests (the local build ran them) would take most of its time.
        # The demo's typed marts too, as the local build has them.
        return ["build", "--resource-type", "model", "--vars", "{example_marts: true}",
                "--target-path", str(self.folder / "target"), "--log-path", str(self.folder / "logs")]  # fmt: skip

    def environment(self) -> dict[str, str]:
        return {"CDC_WAREHOUSE_DIR": str(self.folder / "warehouse"), "CDC_SCHEMA": self.schema}

    def model_statuses(self) -> dict[str, str]:
        """Each model of the build (its table or view name) and how it ended."""
        results = json.loads((self.folder / "target" / "run_results.json").read_text())["results"]
        return {
            result["unique_id"].split(".")[-1]: result["status"]
            for result in results
            if result["unique_id"].startswith("model.")
        }

    def tables_written(self) -> dict[str, Path]:
        """The incremental models' tables (the rest are views over them), each with its folder."""
        manifest = json.loads((self.folder / "target" / "manifest.json").read_text())
        warehouse = Settings(PACKAGE_PROJECT_DIR, DEMO_LANDING, self.folder / "warehouse", None)
        tables_dir = warehouse.tables_dir / f"{self.schema}.db"
        return {
            node["alias"]: tables_dir / node["alias"]
            for node in manifest["nodes"].values()
            if node["resource_type"] == "model" and node["config"]["materialized"] == "incremental"
        }


def computed_rows(frame: DataFrame) -> list[str]:
    """A table's rows as sorted JSON texts: each key's newest generation where the table has
    generations of rows (the merged aggregates hold one row each), without the build stamps."""
    if "generation" in frame.columns and set(KEY) <= set(frame.columns):
        newest = sf.max("generation").over(Window.partitionBy(*KEY))
        frame = frame.withColumn("newest", newest).where("generation = newest").drop("newest")
    kept = [sf.col(f"`{column}`") for column in frame.columns if column not in BUILD_STAMPS]
    return sorted(row[0] for row in frame.select(sf.to_json(sf.struct(*kept))).collect())


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    """`cdc-dbt` processes a test started; any still running when it ends is stopped."""
    started: list[Run] = []
    yield started
    for run in started:
        run.stop()


def test_a_cluster_build_equals_the_local_build(
    demo_build: Build, spark_cluster: Cluster, runs: list[Run], tmp_path: Path
) -> None:
    probe = subprocess.run(
        [str(spark_cluster.python), "-c", "import pyspark, pyarrow, pandas, orjson\nimport udfs"],
        cwd=tmp_path,
        env=cluster_environment(),
        capture_output=True,
        text=True,
    )
    assert "No module named 'udfs'" in probe.stderr, f"executors could import udfs by themselves: {probe}"
    spark_cluster.python_launches.unlink()

    on_cluster = Target(tmp_path / "on-cluster", "cdc_on_cluster")
    on_cluster.folder.mkdir()
    cluster_environment_of_driver = {
        **on_cluster.environment(),
        "SPARK_MASTER_URL": spark_cluster.master_url,
        # The driver listens and advertises on 127.0.0.1, where the executors are.
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": str(spark_cluster.python),
    }
    runs.append(
        cdc_dbt("the build on the cluster", on_cluster.build_args(), on_cluster.folder, cluster_environment_of_driver)
    )
    runs[-1].finish()
    models = on_cluster.model_statuses()
    assert set(models) >= CORE_TABLES | TYPED_MARTS, sorted(models)
    assert {model: status for model, status in models.items() if status != "success"} == {}

    status = spark_cluster.status()
    assert [app["name"] for app in status["completedapps"] + status["activeapps"]] == ["cdc-dbt"], status
    assert spark_cluster.python_launches.read_text().strip(), "the executors never started the isolated Python"
    shipped = [path for worker_dir in spark_cluster.worker_dirs for path in worker_dir.rglob("udfs.zip")]
    assert shipped, "no executor fetched the driver's udfs.zip"

    spark = demo_build.spark
    tables = on_cluster.tables_written()
    assert {"int_records_parsed_unbound", "int_row_events_versioned"} <= set(tables), sorted(tables)
    cluster_rows = {table: computed_rows(spark.read.parquet(str(folder))) for table, folder in tables.items()}
    local_rows = {table: computed_rows(spark.table(f"`{demo_build.schema}`.`{table}`")) for table in tables}
    # The demo forgets no row and lands no Avro: the erasure list and the retried records stay empty.
    empty_in_the_demo = {"cdc_erasures", "int_avro_records_retried"}
    assert all(rows for table, rows in local_rows.items() if table not in empty_in_the_demo), (
        "every other table of the local build holds rows"
    )
    differing = {
        table: (len(cluster_rows[table]), len(local_rows[table]))
        for table in tables
        if cluster_rows[table] != local_rows[table]
    }
    assert not differing, f"tables differ (rows on the cluster, rows locally): {differing}"
