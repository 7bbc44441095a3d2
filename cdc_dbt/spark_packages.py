"""The jars of Spark packages the project needs, put on the driver's own classpath: a table
format's (Delta Lake) and, for `cdc-dbt land`, Spark's Kafka source.

Neither is part of Spark's own jars: they come from Maven Central. Spark's `spark.jars.packages` would
resolve it at every start (a second, and 40 lines of Ivy's report on stderr), and it adds the jars
through a class loader that the warm server's statement threads do not use: their queries failed
with NoClassDefFoundError. So a package is resolved once per machine, by a short Spark start of its
own in a child process that prints the jars Spark fetched (into its Ivy cache, `~/.ivy2.5.2`), and
the list is kept under `$XDG_CACHE_HOME/cdc-dbt` (`~/.cache/cdc-dbt`). Every session then starts
with those jars on the driver's classpath and ships them to executors. Spark's own jars come
first: a dependency Spark already ships is left out.

    python -m cdc_dbt.spark_packages <group:artifact:version>[,...]    (what the child process runs)
"""

import fcntl
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

TABLE_FORMAT_PACKAGES = {
    "delta": "io.delta:delta-spark_4.1_2.13:4.4.0",
    "iceberg": "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0,org.xerial:sqlite-jdbc:3.53.0.0",
}
"""The Maven packages each table format needs beyond Spark (comma-separated, as Spark takes them):
Delta Lake for Spark 4.1, Scala 2.13; Iceberg's Spark 4.1 runtime and the SQLite JDBC driver its
catalog keeps the tables in (session.py)."""
KAFKA_SOURCE_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1"
"""Spark's Kafka source (and Kafka's Java client), of the Spark version pyspark pins."""
JAR_LINE = "cdc-dbt jar: "
"""How the child process prints each jar (the JVM may print to stdout too)."""
UNRESOLVED_PACKAGE = re.compile(r"unresolved dependency: ([^;\]]+);([^:\]]+)")


class PackageUnavailableError(RuntimeError):
    """A package's jars could not be fetched (no Maven Central, nothing cached)."""


def table_format_jars(table_format: str) -> list[str]:
    """The local jars `table_format` needs on the driver's classpath, fetched on first use."""
    package = TABLE_FORMAT_PACKAGES.get(table_format)
    if package is None:
        return []
    remedy = "or set CDC_TABLE_FORMAT=parquet"
    return package_jars(package, f"the {table_format} table format", remedy)


def kafka_source_jars() -> list[str]:
    """The local jars of Spark's Kafka source (`cdc-dbt land`), fetched on first use."""
    return package_jars(KAFKA_SOURCE_PACKAGE, "`cdc-dbt land`", "or land the topics with kcat (README)")


def package_jars(package: str, needed_for: str, remedy: str) -> list[str]:
    """The local jars of `package` (what `needed_for` needs) that Spark lacks, fetched on first use;
    `remedy` ends the one-line error when they cannot be fetched."""
    listing = jar_listing_file(package)
    known = listed_jars(listing)
    if known:
        return known
    listing.parent.mkdir(parents=True, exist_ok=True)
    # Processes started at once on a fresh machine (a test run's workers, a scheduler's jobs) fetch
    # one at a time: Ivy's cache is not safe for two resolutions of the same package at once.
    with listing.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = listed_jars(listing)  # fetched by the process this one waited for
        if known:
            return known
        jars = fetched_jars(package, needed_for, remedy)
        partial = listing.with_suffix(".partial")
        partial.write_text("".join(f"{jar}\n" for jar in jars))
        partial.replace(listing)  # a listing is whole or absent
        return jars


def listed_jars(listing: Path) -> list[str]:
    """The jars a listing names, if it exists and every one of them does."""
    known = listing.read_text().splitlines() if listing.is_file() else []
    return known if known and all(Path(jar).is_file() for jar in known) else []


def jar_listing_file(package: str) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "cdc-dbt" / f"{package.replace(':', '_')}.jars"


def fetched_jars(package: str, needed_for: str, remedy: str) -> list[str]:
    """Start Spark in a child process to fetch `package`; the jars it fetched that Spark lacks."""
    print(f"cdc-dbt: fetching {package} for {needed_for} (once) ...", file=sys.stderr)
    child = subprocess.run(
        [sys.executable, "-m", "cdc_dbt.spark_packages", package], capture_output=True, text=True, timeout=900
    )
    if child.returncode != 0:
        missing = unresolved_packages(child.stderr.splitlines())
        if missing:
            raise PackageUnavailableError(unavailable_message(needed_for, missing, remedy))
        last_lines = " | ".join(child.stderr.strip().splitlines()[-3:])
        raise PackageUnavailableError(f"fetching {package} failed: {last_lines}")
    jars = [line.removeprefix(JAR_LINE) for line in child.stdout.splitlines() if line.startswith(JAR_LINE)]
    return not_shipped_with_spark(jars, spark_jars_dir())


def unresolved_packages(lines: list[str]) -> list[str]:
    """The Maven coordinates (`group:artifact:version`) Spark said it could not resolve."""
    found = (UNRESOLVED_PACKAGE.search(line) for line in lines)
    return sorted({f"{match[1].replace('#', ':')}:{match[2]}" for match in found if match})


def unavailable_message(needed_for: str, packages: list[str], remedy: str) -> str:
    return (
        f"{needed_for} needs {', '.join(packages)}, which Spark could neither fetch from Maven Central nor"
        f" find in its Ivy cache: let this machine reach Maven Central once (the jars are then cached), {remedy}"
    )


def spark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def not_shipped_with_spark(jars: list[str], spark_jars: Path) -> list[str]:
    """`jars` (Ivy's `group_artifact-version.jar`) but those whose artifact Spark ships in any
    version (`artifact-version.jar`): on the classpath before Spark's, they would replace them."""
    shipped = {path.name for path in spark_jars.glob("*.jar")}
    kept = []
    for jar in jars:
        artifact_and_version = Path(jar).name.split("_", 1)[-1]
        artifact = artifact_and_version.rsplit("-", 1)[0]
        if not any(name.startswith(f"{artifact}-") and name[len(artifact) + 1 : len(artifact) + 2].isdigit()
                   for name in shipped):  # fmt: skip
            kept.append(jar)
    return kept


def main(argv: list[str]) -> int:
    """Start Spark with `spark.jars.packages`, print each jar it fetched, stop."""
    from pyspark.sql import SparkSession

    [package] = argv
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("cdc-dbt fetching jars")
        .config("spark.jars.packages", package)
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    for uri in spark.sparkContext.getConf().get("spark.jars", "").split(","):
        if uri:
            print(f"{JAR_LINE}{unquote(urlparse(uri).path)}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
