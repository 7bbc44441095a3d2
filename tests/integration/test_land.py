"""`cdc-dbt land` against a real Kafka broker (tests/real_parts/kafka_broker.py): the demo's records,
produced into the broker at their own partitions and offsets, land in two runs, one of them killed
after its files were complete and before it recorded its offsets; a topic loses offsets to
retention between two lands. What the landing folder then holds is compared with the demo's kcat
files record by record, and what a build makes of it with the demo's own build, table by table."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest
from confluent_kafka import Producer
from deltalake import DeltaTable

from cdc_dbt.land import LANDED_FOLDER, OFFSETS_TABLE
from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from tests.integration.conftest import DEMO_LANDING, Build, DbtProject, rows_query, table_rows
from tests.real_parts.kafka_broker import KafkaBroker

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "cdc_dbt.cli"]
RETAINED_TOPIC = "retained.records"
TOPICS = r"(dbserver1|mongo1|qlik|retained)\..*"
"""The demo's topics and RETAINED_TOPIC."""
HEADER = ("origin", b"\x00demo\xff")
"""A header with bytes no text encoding would keep, on every produced record."""

Record = tuple[str, int, int]
"""A Kafka record's identity: (topic, partition, offset)."""


def demo_records() -> list[dict[str, Any]]:
    """The demo's landed records (kcat lines), in offset order within each partition."""
    records = [
        json.loads(line) for path in sorted(DEMO_LANDING.rglob("*.json")) for line in path.read_text().splitlines()
    ]
    return sorted(records, key=lambda record: (record["topic"], record["partition"], record["offset"]))


def produce(kafka: KafkaBroker, records: list[dict[str, Any]]) -> None:
    """Each record to its topic and partition, with its key, payload and timestamp: produced in
    offset order into partitions that start empty, each lands at its own offset."""
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "enable.idempotence": True})
    for record in records:
        producer.produce(
            record["topic"],
            key=None if record["key"] is None else record["key"].encode(),
            value=None if record["payload"] is None else record["payload"].encode(),
            partition=record["partition"],
            timestamp=record["ts"],
            headers=[HEADER],
        )
    assert producer.flush(60) == 0


def cdc_dbt_land(
    args: list[str], landing: Path, warehouse: Path, kafka: KafkaBroker
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "land", *args], cwd=PACKAGE_PROJECT_DIR, env=land_environment(landing, warehouse, kafka),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def land_environment(landing: Path, warehouse: Path, kafka: KafkaBroker | None) -> dict[str, str]:
    # The schema named, not inherited from the suite's last in-process build (which sets CDC_SCHEMA).
    environment = {
        **os.environ,
        "CDC_LANDING_DIR": str(landing),
        "CDC_WAREHOUSE_DIR": str(warehouse),
        "CDC_SCHEMA": "cdc",
    }
    if kafka is not None:
        environment["CDC_KAFKA_BOOTSTRAP_SERVERS"] = kafka.bootstrap_servers
    return environment


def killed_once_its_files_are_in_place(args: list[str], landing: Path, warehouse: Path, kafka: KafkaBroker) -> str:
    """`cdc-dbt land`, SIGKILLed as soon as its folder appears under the landing folder's
    LANDED_FOLDER: after its files are complete, before it records its offsets (a Delta commit,
    hundreds of milliseconds later). Returns the folder it left."""
    before = set(landed_folders(landing))
    said = warehouse.parent / "killed-land.stderr"
    with said.open("w") as stderr:
        process = subprocess.Popen(
            [*CLI, "land", *args], cwd=PACKAGE_PROJECT_DIR, env=land_environment(landing, warehouse, kafka),
            stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    deadline = time.monotonic() + 600
    try:
        while not (new := set(landed_folders(landing)) - before):
            assert process.poll() is None, (
                f"land ended ({process.returncode}) before its files appeared: {said.read_text()}"
            )
            assert time.monotonic() < deadline, "land wrote no folder in 10 minutes"
            time.sleep(0.005)
    finally:  # killed here, or (a failed wait) by its PID all the same: nothing left running
        process.send_signal(signal.SIGKILL)
        process.wait()
    [folder] = new
    return folder


def landed_folders(landing: Path) -> list[str]:
    return (
        sorted(path.name for path in (landing / LANDED_FOLDER).glob("*")) if (landing / LANDED_FOLDER).is_dir() else []
    )


def landed_records(folder: Path) -> list[dict[str, Any]]:
    return ds.dataset(folder, format="parquet").to_table().to_pylist() if folder.is_dir() else []


def recorded_offsets(warehouse: Path) -> list[dict[str, Any]]:
    """The offsets table, read by path without Spark (delta-rs)."""
    table = DeltaTable(str(warehouse / "tables" / "cdc.db" / OFFSETS_TABLE))
    return sorted(
        table.to_pyarrow_table().to_pylist(), key=lambda row: (row["landed_ts"], row["topic"], row["partition"])
    )


@dataclass
class Lands:
    landing: Path
    warehouse: Path
    runs: list[subprocess.CompletedProcess[str]]
    killed_folder: str
    offsets_after_kill: list[dict[str, Any]]


@pytest.fixture(scope="module")
def kafka(kafka_broker: KafkaBroker) -> KafkaBroker:
    return kafka_broker


@pytest.fixture(scope="module")
def lands(kafka: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Lands:
    """Half of each demo partition landed; the rest produced and landed by a land killed once its
    files were in place, then by a whole one. A topic whose first records retention deleted
    between two lands."""
    folder = tmp_path_factory.mktemp("land")
    landing, warehouse = folder / "landing", folder / "warehouse"
    records = demo_records()
    for topic in sorted({record["topic"] for record in records}):
        kafka.create_topic(topic, partitions=2)
    first_half = first_half_of_each_partition(records)
    produce(kafka, first_half)
    retained = [{"topic": RETAINED_TOPIC, "partition": 0, "ts": 1_700_000_000_000 + n, "key": None,
                 "payload": f"record {n}, no change event"} for n in range(20)]  # fmt: skip
    produce(kafka, retained[:10])
    runs = [cdc_dbt_land(["--pattern", TOPICS], landing, warehouse, kafka)]
    produce(kafka, [record for record in records if record not in first_half])
    produce(kafka, retained[10:])
    assert kafka.delete_records_before(RETAINED_TOPIC, 0, 15) == 15
    killed = killed_once_its_files_are_in_place(["--pattern", TOPICS], landing, warehouse, kafka)
    offsets_after_kill = recorded_offsets(warehouse)
    runs.append(cdc_dbt_land(["--pattern", TOPICS], landing, warehouse, kafka))
    for run in runs:
        assert run.returncode == 0, run.stderr
    return Lands(landing, warehouse, runs, killed, offsets_after_kill)


def first_half_of_each_partition(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sizes = Counter((record["topic"], record["partition"]) for record in records)
    return [record for record in records if record["offset"] < (sizes[record["topic"], record["partition"]] + 1) // 2]


def identity(record: dict[str, Any]) -> Record:
    return (record["topic"], record["partition"], record["offset"])


def test_every_record_lands_with_its_key_payload_timestamp_and_headers(lands: Lands) -> None:
    landed = {identity(record): record for record in landed_records(lands.landing / LANDED_FOLDER)}
    expected = demo_records()
    assert {identity(record) for record in expected} <= set(landed)
    for record in expected:
        parquet = landed[identity(record)]
        assert parquet["key"] == (None if record["key"] is None else record["key"].encode())
        assert parquet["value"] == (None if record["payload"] is None else record["payload"].encode())
        assert int(parquet["timestamp"].timestamp() * 1000) == record["ts"]
        assert parquet["timestampType"] == 0  # CreateTime: the producer's
        assert parquet["headers"] == [{"key": HEADER[0], "value": HEADER[1]}]


def test_a_killed_land_leaves_complete_files_and_no_offsets_and_the_next_lands_them_again(lands: Lands) -> None:
    killed = landed_records(lands.landing / LANDED_FOLDER / lands.killed_folder)
    demo = demo_records()
    first_half = first_half_of_each_partition(demo)
    assert {identity(record) for record in killed} == {
        *(identity(record) for record in demo if record not in first_half),
        *((RETAINED_TOPIC, 0, offset) for offset in range(15, 20)),
    }
    assert all(row["landed_folder"] != str(lands.landing / LANDED_FOLDER / lands.killed_folder)
               for row in lands.offsets_after_kill)  # fmt: skip
    counts = Counter(identity(record) for record in landed_records(lands.landing / LANDED_FOLDER))
    # Landed twice: exactly the killed land's records; every other record once; nothing after.
    assert {record for record, count in counts.items() if count == 2} == {identity(record) for record in killed}
    assert max(counts.values()) == 2
    assert not (lands.landing / ".cdc-land-in-progress").exists()


def test_offsets_deleted_by_retention_before_a_land_are_said_and_counted(lands: Lands) -> None:
    retained = [record for record in landed_records(lands.landing / LANDED_FOLDER) if record["topic"] == RETAINED_TOPIC]
    assert sorted({record["offset"] for record in retained}) == [*range(10), *range(15, 20)]
    said = lands.runs[1].stderr
    assert f"{RETAINED_TOPIC} partition 0: 5 offsets (up to 14) were deleted by the topic's retention" in said
    rows = [row for row in recorded_offsets(lands.warehouse) if row["topic"] == RETAINED_TOPIC]
    assert [(row["next_offset"], row["records"], row["offsets_lost"]) for row in rows] == [(10, 10, 0), (20, 5, 5)]


def test_land_then_build_gives_the_tables_of_the_demo(lands: Lands, dbt_project: DbtProject, demo_build: Build) -> None:
    dbt_project.build(lands.landing, schema="landed_demo", data_tests=False)
    tables = {"cdc_changes", "cdc_current", "cdc_history", "cdc_quarantine", "cdc_transactions"}
    landed = table_rows([row.asDict() for row in dbt_project.spark.sql(rows_query("landed_demo", tables)).collect()])
    demo = table_rows([row.asDict() for row in dbt_project.spark.sql(rows_query("demo", tables)).collect()])
    retained = [row for row in landed.get("cdc_quarantine", []) if RETAINED_TOPIC in row]
    assert len(retained) == 15  # no change events: quarantined, every one once
    landed["cdc_quarantine"] = [row for row in landed.get("cdc_quarantine", []) if RETAINED_TOPIC not in row]
    assert {table: rows for table, rows in landed.items() if rows} == demo


def test_land_says_what_is_missing_in_one_line(kafka: KafkaBroker, tmp_path: Path) -> None:
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    helped = cdc_dbt_land(["--help"], landing, warehouse, None)
    assert helped.returncode == 0 and "CDC_KAFKA_BOOTSTRAP_SERVERS" in helped.stdout
    no_cluster = cdc_dbt_land(["some.topic"], landing, warehouse, None)
    assert (no_cluster.returncode, no_cluster.stderr.splitlines()) == (
        2,
        [
            "cdc-dbt land: no Kafka cluster named: set CDC_KAFKA_BOOTSTRAP_SERVERS (host:port,...),"
            " or bootstrap.servers in the file CDC_KAFKA_PROPERTIES_FILE names"
        ],
    )
    no_topic = cdc_dbt_land([RETAINED_TOPIC, "no.such.topic"], landing, warehouse, kafka)
    assert no_topic.returncode == 1
    assert no_topic.stderr.splitlines()[-1] == "cdc-dbt land: no topic named no.such.topic on the cluster"
    assert not landing.exists() or not any(landing.rglob("*.parquet"))  # nothing landed of the topic that exists
