"""The jars of Spark packages (cdc_dbt.spark_packages): a package Spark could not fetch is named in
one line (the lines are Spark 4.1's own, as printed on this machine); the jars Spark already ships
are left out of the driver's classpath; a listing whose jars are all there is used as it is, and one
another process is fetching is waited for; and a session already running (a platform's) gets no
settings of ours."""

import subprocess
import sys
from pathlib import Path

import pytest
from pyspark import SparkContext

from cdc_dbt import spark_packages
from cdc_dbt.session import platform_session_running
from cdc_dbt.spark_packages import (
    TABLE_FORMAT_PACKAGES,
    jar_listing_file,
    not_shipped_with_spark,
    table_format_jars,
    unavailable_message,
    unresolved_packages,
)

DELTA_PACKAGE = TABLE_FORMAT_PACKAGES["delta"]
UNRESOLVED = [
    "\t\t:: io.delta#delta-spark_4.1_2.13;4.4.0: not found",
    'Exception in thread "main" java.lang.RuntimeException: [unresolved dependency:'
    " io.delta#delta-spark_4.1_2.13;4.4.0: not found]",
    "\tat org.apache.spark.util.MavenUtils$.resolveMavenCoordinates(MavenUtils.scala:539)",
]


def test_a_package_spark_could_not_resolve_is_named_as_maven_coordinates() -> None:
    assert unresolved_packages(UNRESOLVED) == [DELTA_PACKAGE]
    assert unresolved_packages(["\tfound io.delta#delta-spark_4.1_2.13;4.4.0 in central"]) == []


def test_the_message_is_one_line_saying_what_to_set() -> None:
    message = unavailable_message("the delta table format", [DELTA_PACKAGE], "or set CDC_TABLE_FORMAT=parquet")
    assert "\n" not in message
    assert message.startswith(f"the delta table format needs {DELTA_PACKAGE}, which Spark could neither")
    assert message.endswith("(the jars are then cached), or set CDC_TABLE_FORMAT=parquet")


def test_a_jar_whose_artifact_spark_ships_in_any_version_is_left_out(tmp_path: Path) -> None:
    for name in ("parquet-column-1.16.0.jar", "RoaringBitmap-1.3.0.jar", "jackson-core-2.20.0.jar"):
        (tmp_path / name).touch()
    fetched = [
        "/ivy/jars/io.delta_delta-spark_4.1_2.13-4.4.0.jar",
        "/ivy/jars/org.apache.parquet_parquet-column-1.16.0.jar",
        "/ivy/jars/org.roaringbitmap_RoaringBitmap-0.9.25.jar",
        "/ivy/jars/org.roaringbitmap_shims-0.9.25.jar",
        "/ivy/jars/com.fasterxml.jackson.core_jackson-core-2.13.5.jar",
        "/ivy/jars/com.fasterxml.jackson.core_jackson-core-asl-1.9.jar",
    ]
    assert not_shipped_with_spark(fetched, tmp_path) == [
        "/ivy/jars/io.delta_delta-spark_4.1_2.13-4.4.0.jar",
        "/ivy/jars/org.roaringbitmap_shims-0.9.25.jar",
        "/ivy/jars/com.fasterxml.jackson.core_jackson-core-asl-1.9.jar",
    ]


def test_a_listing_whose_jars_are_all_there_is_used_without_fetching(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    jars = [tmp_path / "io.delta_delta-spark_4.1_2.13-4.4.0.jar", tmp_path / "io.delta_delta-storage-4.4.0.jar"]
    for jar in jars:
        jar.touch()
    listing = jar_listing_file(DELTA_PACKAGE)
    assert listing == tmp_path / "cache" / "cdc-dbt" / "io.delta_delta-spark_4.1_2.13_4.4.0.jars"
    listing.parent.mkdir(parents=True)
    listing.write_text("".join(f"{jar}\n" for jar in jars))
    assert table_format_jars("delta") == [str(jar) for jar in jars]
    assert table_format_jars("parquet") == []


LOCK_HOLDER = """
import fcntl, pathlib, sys, time
lock = open(sys.argv[1], "w")
fcntl.flock(lock, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(1)
pathlib.Path(sys.argv[2]).write_text(sys.argv[3])
"""
"""A process fetching a package: it holds the package's lock, then writes the listing and ends."""


def test_a_package_another_process_is_fetching_is_waited_for_not_fetched_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    jar = tmp_path / "io.delta_delta-spark_4.1_2.13-4.4.0.jar"
    jar.touch()
    listing = jar_listing_file(DELTA_PACKAGE)
    listing.parent.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(listing.with_suffix(".lock")), str(listing), f"{jar}\n"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"

    def fetch_again(package: str, needed_for: str, remedy: str) -> list[str]:
        raise AssertionError(f"{package} fetched a second time")

    monkeypatch.setattr(spark_packages, "fetched_jars", fetch_again)
    assert table_format_jars("delta") == [str(jar)]
    assert holder.wait(timeout=10) == 0


def test_a_platform_session_is_recognised_by_the_databricks_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)  # the suite's own session aside
    monkeypatch.delenv("DATABRICKS_RUNTIME_VERSION", raising=False)
    assert not platform_session_running()
    monkeypatch.setenv("DATABRICKS_RUNTIME_VERSION", "17.3")
    assert platform_session_running()
