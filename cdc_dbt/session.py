"""Build the SparkSession every cdc-dbt command runs in: warehouse, metastore, UDFs, quiet logs.

dbt-spark's `session` method calls `SparkSession.builder.enableHiveSupport().getOrCreate()`,
which returns the session built here, so every model sees the `cdc_*` functions.
"""

import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from pyspark import SparkContext
from pyspark.sql import SparkSession

import udfs
from cdc_dbt.settings import Settings
from cdc_dbt.spark_packages import kafka_source_jars, table_format_jars
from udfs import spark as udf_registration

SPARK_CONF_DIR = Path(__file__).with_name("spark_conf")
"""Holds log4j2.properties: Spark's INFO/WARN chatter stays out of the user's way."""

PYTHON_WORKER_DAEMON = "cdc_dbt.python_worker"
"""Spark's Python worker daemon minus a per-task cost of Python 3.11 (see that module)."""


JVM_START_WARNINGS = ("WARNING: Using incubator modules: jdk.incubator.vector",)
"""Printed by every JVM Spark starts, of no use to a user: Spark's launcher always adds the module
(org.apache.spark.launcher.JavaModuleOptions) and Java 17 has no switch to silence the warning."""


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


def package_config(settings: Settings, kafka_source: bool = False) -> dict[str, str]:
    """The Spark settings of the packages this session needs (spark_packages.py): the table
    format's jars and catalog (Parquet needs none), and Spark's Kafka source when asked."""
    jars = table_format_jars(settings.table_format) + (kafka_source_jars() if kafka_source else [])
    config = {}
    if jars:
        config["spark.driver.extraClassPath"] = os.pathsep.join(jars)
        config["spark.jars"] = ",".join(jars)  # for the executors of a cluster
    if settings.table_format == "delta":
        config.update(DELTA_CONFIG)
    if settings.table_format == "iceberg":
        config.update(iceberg_config(settings))
    return config


DELTA_CONFIG = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta rebuilds a table's state from its log after each write, in 50 tasks by default,
    # sized for logs of many thousand files; a build's tables have a few hundred, and every
    # model or test reading a table just written waits for it (one task: 0.5x the time).
    "spark.databricks.delta.snapshotPartitions": "1",
}


ICEBERG_CATALOG = "iceberg"
"""The Spark catalog of the Iceberg tables, the session's default: `cdc.cdc_current` is
`iceberg.cdc.cdc_current`. The landed files' external tables stay in Spark's own catalog
(`spark_catalog`), which Iceberg cannot hold (create_landing_tables.sql)."""


def iceberg_config(settings: Settings) -> dict[str, str]:
    """Iceberg's catalog as the default: a JDBC catalog in a SQLite file of the warehouse (Iceberg's
    Hive catalog needs a metastore service, which the embedded Derby one is not; a Hadoop catalog
    under Spark's session catalog can neither replace views nor list its tables to dbt:
    docs/table-formats.md#iceberg). Its schema version V1 is the one that holds views."""
    catalog = f"spark.sql.catalog.{ICEBERG_CATALOG}"
    return {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        catalog: "org.apache.iceberg.spark.SparkCatalog",
        f"{catalog}.type": "jdbc",
        f"{catalog}.uri": f"jdbc:sqlite:{settings.warehouse_dir / 'iceberg_catalog.sqlite'}",
        f"{catalog}.jdbc.schema-version": "V1",
        f"{catalog}.warehouse": (settings.tables_dir / "iceberg").as_uri(),
        "spark.sql.defaultCatalog": ICEBERG_CATALOG,
    }


def platform_session_running() -> bool:
    """Whether a Spark session was started before cdc-dbt's, whose table format and catalog are
    the platform's to set: a notebook's, a Databricks job's (its clusters set
    DATABRICKS_RUNTIME_VERSION)."""
    return SparkContext._active_spark_context is not None or "DATABRICKS_RUNTIME_VERSION" in os.environ


def build_session(
    settings: Settings, extra_config: Mapping[str, str] | None = None, *, kafka_source: bool = False
) -> SparkSession:
    """Start (or return) the process's SparkSession for these settings, UDFs registered;
    `extra_config` adds Spark settings (the warm server's); `kafka_source` puts Spark's Kafka
    source on the classpath (`cdc-dbt land`).

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
    format_config = {} if platform_session_running() else package_config(settings, kafka_source)
    for name, value in {**format_config, **(extra_config or {})}.items():
        builder = builder.config(name, value)
    if not settings.master_url:
        # Our daemon must be importable by the workers: certain locally, not on a cluster.
        builder = builder.config("spark.python.daemon.module", PYTHON_WORKER_DAEMON)
    with jvm_start_warnings_left_out():
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
def jvm_start_warnings_left_out() -> Iterator[None]:
    """Start the JVM inside this block with a pipe as its stderr, and forward every line it writes
    there, for as long as it runs, to this process's stderr, but JVM_START_WARNINGS. When the JVM
    fails to start, what it said is forwarded before the error is raised."""
    stderr_fd = 2  # the JVM inherits the file descriptor, whatever sys.stderr is
    read_end, write_end = os.pipe()
    original_stderr = os.dup(stderr_fd)
    forwarder = threading.Thread(
        target=_forward_lines, args=(read_end, original_stderr), name="cdc-dbt JVM stderr", daemon=True
    )
    forwarder.start()
    sys.stderr.flush()
    os.dup2(write_end, stderr_fd)  # the JVM inherits the pipe as its stderr
    try:
        yield
    except BaseException:
        os.dup2(original_stderr, stderr_fd)
        os.close(write_end)
        forwarder.join(timeout=5)  # a JVM that failed has closed its end: the rest is forwarded
        raise
    os.dup2(original_stderr, stderr_fd)
    os.close(write_end)


def _forward_lines(read_end: int, destination: int) -> None:
    """Until every writer of the pipe has closed it (the JVM has ended, or none started), then
    close `destination`, this forwarder's own copy of stderr."""
    with open(read_end, "rb") as lines, open(destination, "wb", buffering=0) as stderr:
        for line in lines:
            if line.decode(errors="replace").rstrip("\r\n") not in JVM_START_WARNINGS:
                stderr.write(line)
