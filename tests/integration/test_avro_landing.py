"""Avro topics in a Schema Registry's wire format, landed as Parquet, build into the tables of their
JSON twins; a registry that does not answer holds their records, says so, and the next build reads
them.

The records are Debezium PostgreSQL change events with a column of every type
(tests/converter_messages.py), each landed twice: as the JsonConverter writes it, and as
Confluent's AvroConverter would (tests/avro_messages.py: Confluent's own `AvroSerializer`, against a
real Apicurio Registry). The Python workers read the registry's URL from their environment, which
`udfs.spark.register` hands them: a test sets it, then registers the functions again, as each
`cdc-dbt` process does when it starts.
"""

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from cdc_dbt.cli import records_waiting_for_registry
from generator.kafka import parquet_schema
from tests.avro_messages import AvroProducer
from tests.converter_messages import (
    ROW_COLUMNS,
    ROW_SCHEMA,
    TOPIC,
    VALUE_SCHEMA,
    change_event,
    connect_decimal,
    decimal_column,
    key_of,
    row,
)
from tests.integration.conftest import Build, DbtProject, rows_query, table_rows
from tests.real_parts.processes import free_port
from tests.real_parts.schema_registry import SchemaRegistryServer
from udfs import json_text
from udfs import spark as udf_registration
from udfs.logical_types import UNAVAILABLE_BYTES, UNAVAILABLE_VALUE
from udfs.schema_registry import RETRYABLE_REASONS, URL_VARIABLE, USER_INFO_VARIABLE

pytestmark = pytest.mark.spark

CORE_TABLES = {"cdc_changes", "cdc_current", "cdc_history", "cdc_quarantine", "cdc_transactions"}
Message = dict[str, Any] | None
LSN = 24_023_000


def changes() -> list[tuple[Message, Message]]:
    """(key, value) of each record of the topic's one partition, in offset order, in the
    JsonConverter's form: each kind of event, two schema ids (a column added), a tombstone."""
    added = {**VALUE_SCHEMA, "fields": [
        {**ROW_SCHEMA, "field": field, "fields": [*ROW_COLUMNS, decimal_column("discount", 3, 5)]}
        for field in ("before", "after")
    ] + VALUE_SCHEMA["fields"][2:]}  # fmt: skip
    events: list[tuple[Message, Message]] = [
        (None, change_event("t", None, None)),
        (key_of(1), change_event("r", None, row(1), snapshot="first", sequence=None)),
        (key_of(2), change_event("c", None, row(2))),
        (key_of(2), change_event("u", row(2), row(2, price=connect_decimal(1250), tags=[]))),
        (key_of(2), change_event("u", None, row(2, toasted=UNAVAILABLE_VALUE, toasted_bytes=UNAVAILABLE_BYTES))),
        (key_of(3), change_event("c", None, row(3, ratio="NaN", share="-Infinity", odd_float="Infinity"))),
        (key_of(5), {"schema": added, "payload": {**change_event("c", None, row(5))["payload"],
                                                  "after": row(5, discount=connect_decimal(125))}}),
        (key_of(3), change_event("d", row(3, ratio="NaN", share="-Infinity", odd_float="Infinity"), None)),
        (key_of(3), None),
    ]  # fmt: skip
    # Each event its own source position, in offset order.
    for offset, (_, value) in enumerate(events):
        if value is not None:
            lsn = LSN + 8 * offset
            value["payload"]["source"].update(lsn=lsn, sequence=f'["{LSN}","{lsn}"]', ts_ms=1_700_000_000_000 + offset)
    return events


def write_landing(folder: Path, records: list[tuple[bytes | None, bytes | None]]) -> Path:
    """One Parquet file as Spark's Kafka source writes it: the records at offsets 0, 1, ..."""
    folder.mkdir(parents=True)
    rows = [
        {"key": key, "value": value, "topic": TOPIC, "partition": 0, "offset": offset,
         "timestamp": 1_700_000_001_000_000 + offset, "timestampType": 0, "headers": []}
        for offset, (key, value) in enumerate(records)
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows, schema=parquet_schema()), folder / "part-00000.parquet")
    return folder


def unbase64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def json_bytes(message: Message) -> bytes | None:
    return None if message is None else json_text.dumps(message).encode()


@pytest.fixture(scope="module")
def avro_records(schema_registry_server: SchemaRegistryServer) -> list[tuple[bytes | None, bytes | None]]:
    producer = AvroProducer(schema_registry_server.url)
    return [
        (
            None if key is None else producer.message(TOPIC, key, is_key=True),
            None if value is None else producer.message(TOPIC, value),
        )
        for key, value in changes()
    ]


@pytest.fixture(scope="module")
def landings(tmp_path_factory: pytest.TempPathFactory, avro_records: Any) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("avro-landing")
    return {
        "json": write_landing(folder / "json", [(json_bytes(key), json_bytes(value)) for key, value in changes()]),
        "avro": write_landing(folder / "avro", avro_records),
    }


@pytest.fixture(scope="module")
def registry_setting(spark: SparkSession) -> Iterator[Any]:
    """Sets CDC_SCHEMA_REGISTRY_URL for the Python workers of the builds that follow (as a new
    `cdc-dbt` process would start with it); the session's own setting again at the end."""
    saved = {name: os.environ.get(name) for name in (URL_VARIABLE, USER_INFO_VARIABLE)}

    def use(url: str | None) -> None:
        if url is None:
            os.environ.pop(URL_VARIABLE, None)
        else:
            os.environ[URL_VARIABLE] = url
        udf_registration.register(spark)

    yield use
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    udf_registration.register(spark)


def core_tables(build: Build) -> dict[str, list[str]]:
    return table_rows(build.rows(rows_query("{schema}", CORE_TABLES)))


@pytest.fixture(scope="module")
def json_build(dbt_project: DbtProject, landings: dict[str, Path]) -> Build:
    return dbt_project.build(landings["json"], schema="avro_twins_json", data_tests=False)


def test_the_json_twins_build_every_change(json_build: Build) -> None:
    """The reference: every event a change, nothing quarantined (so the Avro side has something to equal)."""
    outcomes = json_build.rows("select outcome, count(*) as n from `{schema}`.int_records_parsed group by 1")
    assert {row["outcome"]: row["n"] for row in outcomes} == {"change": 8, "ignored": 1}
    assert json_build.rows("select count(*) as n from `{schema}`.cdc_current") == [{"n": 3}]


def test_an_unreachable_registry_holds_the_records_and_the_next_build_reads_them(
    dbt_project: DbtProject,
    landings: dict[str, Path],
    avro_records: list[tuple[bytes | None, bytes | None]],
    schema_registry_server: SchemaRegistryServer,
    registry_setting: Any,
    json_build: Build,
) -> None:
    schema = "avro_twins_waiting"
    nothing_listens = f"http://127.0.0.1:{free_port()}/apis/ccompat/v7"
    registry_setting(nothing_listens)
    said: list[str] = []
    held = dbt_project.build(landings["avro"], schema=schema, said=said)

    quarantined = held.rows(
        "select `offset`, reason, detail, key, payload, is_key_base64, is_payload_base64"
        " from `{schema}`.cdc_quarantine order by `offset`"
    )
    assert [row["offset"] for row in quarantined] == list(range(len(avro_records)))
    assert {row["reason"] for row in quarantined} == {"schema_registry_unavailable"}
    assert all(nothing_listens in record["detail"] for record in quarantined)
    # The bytes as landed, as base64: nothing is lost while the records wait.
    shown = [(unbase64(record["key"]), unbase64(record["payload"])) for record in quarantined]
    assert shown == avro_records
    assert [(record["is_key_base64"], record["is_payload_base64"]) for record in quarantined] == [
        (key is not None, value is not None) for key, value in avro_records
    ]
    assert held.rows("select count(*) as n from `{schema}`.cdc_changes") == [{"n": 0}]
    waiting = [line for line in said if "wait for the Schema Registry" in line]
    assert waiting == [
        f"[WARNING]: cdc-dbt: {len(avro_records)} Avro records wait for the Schema Registry"
        f" ({len(avro_records)} schema_registry_unavailable; CDC_SCHEMA_REGISTRY_URL): they stay in"
        f" {schema}.cdc_quarantine until a build reads them, and the next build retries them."
    ]
    assert records_waiting_for_registry(dbt_project.spark, schema) == len(avro_records)

    # The registry answers: the next build, with no new file, reads the held records.
    registry_setting(schema_registry_server.url)
    said.clear()
    read = dbt_project.build(landings["avro"], schema=schema, said=said)
    assert not [line for line in said if "wait for the Schema Registry" in line]
    assert records_waiting_for_registry(dbt_project.spark, schema) == 0
    retried = read.rows("select count(*) as n from `{schema}`.int_avro_records_retried")
    assert retried == [{"n": len(avro_records)}]
    assert core_tables(read) == core_tables(json_build)

    # And the tables equal a full refresh of the same landing: the Avro topic read at once.
    refreshed = dbt_project.build(landings["avro"], schema=schema, full_refresh=True, data_tests=False)
    assert refreshed.rows("select count(*) as n from `{schema}`.int_avro_records_retried") == [{"n": 0}]
    assert core_tables(refreshed) == core_tables(json_build)


def test_the_retry_reasons_of_the_models_are_the_python_ones(dbt_project: DbtProject) -> None:
    compiled = dbt_project.compile_inline("select 1 where 'x' in {{ cdc_registry_retry_reasons() }}", "avro_twins_json")
    listed = compiled.split(" in ", 1)[1].strip(" ()\n").replace("'", "").split(", ")
    assert sorted(listed) == sorted(RETRYABLE_REASONS)
