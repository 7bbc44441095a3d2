"""A build killed at a random point, then run again, gives the tables an uninterrupted build gives.

Each model's write is one Spark statement, and every incremental model takes what its input holds
and it does not (never "what this build read"), so a build killed between two models, or inside
one, is completed by the next. The builds run as users run them: `cdc-dbt build` in its own
process (its own JVM and warehouse), stopped at a seeded random point: just after a random model
of the build has started, plus a random fraction of a second, so a stop lands inside a model's
statement or between two. The first build, of a first batch of files, gets Ctrl-C (SIGINT to its
process group, as a terminal sends it) and must end at once with one line and status 130; the
second, of a second batch, is killed (SIGKILL, process group and all); a third runs to the end.

Two small generated scenarios (300 events each, with truncates, deletes and late events across
two batches) are enough: what a kill can break is a model's write, whatever its size, and every
model of the path to `cdc_current` and `cdc_history` is written by each build.
"""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings
from tests.harness import arrival_batches, generate_scenario, oracle_of_records, split_into_files, write_landing
from tests.integration.conftest import DbtProject

pytestmark = pytest.mark.slow

SEED = 7001
SCENARIOS = (("interrupted_a", 11, 3), ("interrupted_b", 12, 2))
EVENTS_PER_SCENARIO = 300
CLI_BUILD = [sys.executable, "-m", "cdc_dbt.cli", "build"]
HISTORY_COLUMNS = (
    "source_db, source_table, row_key, version, row, valid_from, valid_to, is_current, ended_by, op, source_position"
)


def start_build(landing: Path, warehouse: Path) -> subprocess.Popen[str]:
    environment = {
        **os.environ,
        "CDC_LANDING_DIR": str(landing),
        "CDC_WAREHOUSE_DIR": str(warehouse),
        "PYTHONUNBUFFERED": "1",  # each progress line as it happens: the kill is timed by them
    }
    environment.pop("CDC_SCHEMA", None)
    return subprocess.Popen(
        [*CLI_BUILD, "--select", "+cdc_current", "+cdc_history", "--exclude-resource-type", "unit_test"],
        cwd=PACKAGE_PROJECT_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: the JVM dies with it
    )


def stop_inside_model(
    build: subprocess.Popen[str], model_number: int, delay: float, signal_number: signal.Signals
) -> list[str]:
    """Send `signal_number` to the build's whole process group `delay` seconds after its
    `model_number`-th model started, or let it finish first; return what it printed."""
    assert build.stdout is not None
    output, models_started = [], 0
    for line in build.stdout:
        output.append(line)
        models_started += " START sql " in line
        if models_started == model_number:
            time.sleep(delay)
            os.killpg(build.pid, signal_number)
            break
    rest, _ = build.communicate()
    return [*output, *rest.splitlines(keepends=True)]


def history_rows(spark: SparkSession, relation: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in spark.sql(f"select {HISTORY_COLUMNS} from {relation}").collect())


@pytest.fixture(scope="module")
def landing_batches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[Any]]]:
    rng = random.Random(SEED)
    records = [
        record
        for db, seed, partitions in SCENARIOS
        for record in generate_scenario(db, seed, events=EVENTS_PER_SCENARIO, partitions=partitions).records
    ]
    return tmp_path_factory.mktemp("interrupted"), arrival_batches(records, 2, 0.05, rng)


def test_a_killed_build_rerun_gives_the_tables_of_an_uninterrupted_one(
    landing_batches: tuple[Path, list[list[Any]]], dbt_project: DbtProject
) -> None:
    root, batches = landing_batches
    rng = random.Random(SEED)
    landing, warehouse = root / "landing", root / "warehouse"
    kills = []
    for number, (batch, stop) in enumerate(zip(batches, (signal.SIGINT, signal.SIGKILL), strict=True)):
        write_landing(landing / f"batch-{number}", split_into_files(batch, 3, rng))
        # The path to cdc_current and cdc_history has 10 models; each build is stopped inside one of them.
        model_number, delay = rng.randint(1, 9), rng.uniform(0.0, 1.5)
        build = start_build(landing, warehouse)
        output = stop_inside_model(build, model_number, delay, stop)
        kills.append((model_number, round(delay, 2), [line.strip() for line in output if " START sql " in line][-1:]))
        assert not any("Completed successfully" in line for line in output), f"the build finished first: {kills}"
        if stop == signal.SIGINT:
            assert build.returncode == 130, output[-20:]
            assert output[-1] == "cdc-dbt: interrupted; nothing is lost: run the same command again to finish\n"
            assert not any("Traceback" in line or "KeyboardInterrupt" in line for line in output), output[-20:]
    finished = start_build(landing, warehouse)
    output, _ = finished.communicate(timeout=900)
    assert finished.returncode == 0, output[-3000:]

    # The tables are read from the files of the killed warehouse, in this test's own session.
    spark = dbt_project.spark
    tables_dir = Settings(PACKAGE_PROJECT_DIR, landing, warehouse, None).tables_dir
    versions_dir = tables_dir / "cdc.db" / "int_row_events_versioned"
    spark.read.parquet(str(versions_dir)).createOrReplaceTempView("versions_read")
    # Every generation a build wrote is in the files; each key's newest is its state.
    spark.sql(
        "select * from (select *, max(generation) over (partition by source_db, source_table, row_key)"
        " as newest from versions_read) where generation = newest"
    ).createOrReplaceTempView("interrupted_history")
    interrupted = history_rows(spark, "interrupted_history")

    # Its data tests are left out: the tables are compared here, and the last `cdc-dbt build` ran them.
    dbt_project.build(landing, schema="uninterrupted", select="+cdc_current +cdc_history", data_tests=False)
    uninterrupted = history_rows(spark, "uninterrupted.cdc_history")
    assert interrupted == uninterrupted, f"kills (model number, delay, model started last): {kills}"

    expected = oracle_of_records([record for batch in batches for record in batch])
    assert {(db, table, key) for db, table, key, *_ in interrupted} == set(expected.history)
