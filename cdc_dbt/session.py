"""Build the SparkSession every cdc-dbt command runs in: warehouse, metastore, UDFs, quiet logs.

dbt-spark's `session` method calls `SparkSession.builder.enableHiveSupport().getOrCreate()`,
which returns the session built here, so every model sees the `cdc_*` functions.
"""

import contextlib
import logging
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from pyspark.sql import SparkSession

import udfs
from cdc_dbt.settings import Settings
from udfs import spark as udf_registration

SPARK_CONF_DIR = Path(__file__).with_name("spark_conf")
"""Holds log4j2.properties: Spark's INFO/WARN chatter stays out of the user's way."""

PYTHON_WORKER_DAEMON = "cdc_dbt.python_worker"
"""Spark's Python worker daemon minus a per-task cost of Python 3.11 (see that module)."""


JVM_START_WARNINGS = ("WARNING: Using incubator modules: jdk.incubator.vector",)
"""Printed by every JVM Spark starts, of no use to a user: Spark's launcher always adds the module
(org.apache.spark.launcher.JavaModuleOptions) and Java 17 has no switch to silence the warning."""


DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"
"""Delta Lake for Spark 4.1 (Scala 2.13). Spark fetches it and its dependencies from Maven Central
at the first start of a session and keeps them in its Ivy cache (~/.ivy2.5.2) for every later one."""


class JavaMissingError(RuntimeError):
    """Spark needs a Java runtime; raised before trying to start one."""


def find_java() -> str | None:
    """The `java` Spark will run: JAVA_HOME's, else the PATH's; None when there is none."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    return shutil.which("java")


def require_java() -> None:
    if find_java() is None:
        raise JavaMissingError(
            "Java 17 or newer is needed and none was found: install it"
            " (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
        )


class TableFormatUnavailableError(RuntimeError):
    """The table format's jars could not be fetched (no Maven Central, nothing cached)."""


def table_format_config(table_format: str) -> dict[str, str]:
    """The Spark settings the table format needs: its jars and its catalog. Parquet needs none."""
    if table_format != "delta":
        return {}
    return {
        "spark.jars.packages": DELTA_PACKAGE,
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # Delta rebuilds a table's state from its log after each write, in 50 tasks by default,
        # sized for logs of many thousand files; a build's tables have a few hundred, and every
        # model or test reading a table just written waits for it (one task: 0.5x the time).
        "spark.databricks.delta.snapshotPartitions": "1",
    }


def build_session(settings: Settings, extra_config: Mapping[str, str] | None = None) -> SparkSession:
    """Start (or return) the process's SparkSession for these settings, UDFs registered;
    `extra_config` adds Spark settings (the warm server's).

    A session that already runs in this process (a Databricks notebook's, a platform's with Delta
    configured) is used as it is: its table format and catalog are the platform's to set."""
    require_java()
    settings.tables_dir.mkdir(parents=True, exist_ok=True)
    settings.landing_dir.mkdir(parents=True, exist_ok=True)
    # Spark reads local time zone for display and casts; UTC keeps results identical everywhere.
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ.setdefault("SPARK_CONF_DIR", str(SPARK_CONF_DIR))
    # Python workers must run this interpreter (it has orjson and the udfs package), not
    # whatever `python3` the PATH finds first.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # PySpark logs failed queries itself; the CLI reports them in one line instead.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    platform_session = SparkSession.getActiveSession()
    java_options = " ".join(
        (
            f"-Dderby.system.home={settings.warehouse_dir}",
            f"-Dderby.stream.error.file={settings.warehouse_dir / 'derby.log'}",
            "-Duser.timezone=UTC",
        )
    )
    builder = (
        SparkSession.builder.appName("cdc-dbt")
        .master(settings.master_url or "local[*]")
        .config("spark.sql.warehouse.dir", settings.tables_dir.as_uri())
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={settings.metastore_dir};create=true",
        )
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", os.environ.get("CDC_SHUFFLE_PARTITIONS", "8"))
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        # The tables hold JSON text (payloads, row images): zstd stores them in 0.40 of snappy's
        # space, Spark's default, with builds as fast (bench/parquet_codec.py).
        .config("spark.sql.parquet.compression.codec", "zstd")
        .enableHiveSupport()
    )
    format_config = {} if platform_session else table_format_config(settings.table_format)
    for name, value in {**format_config, **(extra_config or {})}.items():
        builder = builder.config(name, value)
    if not settings.master_url:
        # Our daemon must be importable by the workers: certain locally, not on a cluster.
        builder = builder.config("spark.python.daemon.module", PYTHON_WORKER_DAEMON)
    with jvm_start_output_filtered(settings.table_format):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if settings.master_url:
        _ship_udfs(spark)
    udf_registration.register(spark)
    return spark


def _ship_udfs(spark: SparkSession) -> None:
    """Executors on a cluster get the parsing core from the driver, as a zip on their path."""
    package_dir = Path(udfs.__file__).parent
    archive = Path(tempfile.mkdtemp(prefix="cdc-dbt-")) / "udfs.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in package_dir.rglob("*.py"):
            bundle.write(path, Path("udfs") / path.relative_to(package_dir))
    spark.sparkContext.addPyFile(str(archive))


@contextlib.contextmanager
def jvm_start_output_filtered(table_format: str = "parquet") -> Iterator[None]:
    """Start the JVM inside this block with a pipe as its stderr. What it writes while it starts is
    held; once it has started, that is forwarded to this process's stderr but JVM_START_WARNINGS
    and Spark's report of resolving the format's jars (Ivy's 40 lines, at every start), and every
    later line is forwarded as it comes, for as long as the JVM runs. When the JVM fails to start
    because a package could not be fetched, that is raised in one line
    (TableFormatUnavailableError); when it fails otherwise, what it said is forwarded first."""
    stderr_fd = 2  # the JVM inherits the file descriptor, whatever sys.stderr is
    read_end, write_end = os.pipe()
    forwarder = _StderrForwarder(read_end, os.dup(stderr_fd))
    sys.stderr.flush()
    original_stderr = os.dup(stderr_fd)
    os.dup2(write_end, stderr_fd)  # the JVM inherits the pipe as its stderr
    try:
        yield
    except BaseException:
        os.dup2(original_stderr, stderr_fd)
        os.close(original_stderr)
        os.close(write_end)
        held = forwarder.held_once_closed(timeout_seconds=5)  # a JVM that failed has closed its end
        missing = unresolved_packages(held)
        if missing:
            forwarder.release(lambda lines: [])
            raise TableFormatUnavailableError(format_unavailable_message(table_format, missing)) from None
        forwarder.release(lambda lines: lines)
        raise
    os.dup2(original_stderr, stderr_fd)
    os.close(original_stderr)
    os.close(write_end)
    forwarder.release(without_ivy_report)


IVY_REPORT_START = ":: loading settings ::"
IVY_REPORT_END = re.compile(r"^\s*\d+ artifacts copied, \d+ already retrieved")
UNRESOLVED_PACKAGE = re.compile(r"unresolved dependency: ([^;\]]+);([^:\]]+)")


def without_ivy_report(lines: list[str]) -> list[str]:
    """`lines` without Spark's report of resolving packages: from Ivy's `:: loading settings ::`
    to its count of the jars retrieved."""
    kept, in_report = [], False
    for line in lines:
        in_report = in_report or line.startswith(IVY_REPORT_START)
        if not in_report:
            kept.append(line)
        elif IVY_REPORT_END.match(line):
            in_report = False
    return kept


def unresolved_packages(lines: list[str]) -> list[str]:
    """The Maven coordinates (`group:artifact:version`) Spark said it could not resolve."""
    found = (UNRESOLVED_PACKAGE.search(line) for line in lines)
    return sorted({f"{match[1].replace('#', ':')}:{match[2]}" for match in found if match})


def format_unavailable_message(table_format: str, packages: list[str]) -> str:
    return (
        f"the {table_format} table format needs {', '.join(packages)}, which Spark could neither fetch from"
        " Maven Central nor find in its Ivy cache: let this machine reach Maven Central once (the jars are"
        " then cached), or set CDC_TABLE_FORMAT=parquet"
    )


class _StderrForwarder:
    """Reads the JVM's stderr on a thread: holds the lines until `release`, then writes every line
    to `destination` as it comes. `destination`, this forwarder's own copy of stderr, is closed
    once every writer of the pipe has closed it and the held lines are released."""

    def __init__(self, read_end: int, destination: int) -> None:
        self._destination = open(destination, "wb", buffering=0)  # noqa: SIM115 - closed below
        self._held: list[str] | None = []
        self._pipe_closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._forward, args=(read_end,), name="cdc-dbt JVM stderr", daemon=True)
        self._thread.start()

    def _forward(self, read_end: int) -> None:
        with open(read_end, "rb") as lines:
            for raw in lines:
                line = raw.decode(errors="replace").rstrip("\r\n")
                with self._lock:
                    if self._held is None:
                        self._write([line])
                    else:
                        self._held.append(line)
        with self._lock:
            self._pipe_closed = True
            if self._held is None:
                self._destination.close()

    def held_once_closed(self, timeout_seconds: float) -> list[str]:
        """The lines held, once the pipe is closed (or `timeout_seconds` have passed)."""
        self._thread.join(timeout=timeout_seconds)
        with self._lock:
            return list(self._held or [])

    def release(self, keep: Callable[[list[str]], list[str]]) -> None:
        """Write the lines `keep` keeps of those held, and from now on every line as it comes."""
        with self._lock:
            held, self._held = self._held or [], None
            self._write(keep(held))
            if self._pipe_closed:
                self._destination.close()

    def _write(self, lines: list[str]) -> None:
        for line in lines:
            if line not in JVM_START_WARNINGS:
                self._destination.write(f"{line}\n".encode())
