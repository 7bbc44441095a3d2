"""The whole loop with real parts, in Avro: one PostgreSQL 15 database captured by two Debezium 3.6.3
PostgreSQL connectors at once, one writing keys and values with the JsonConverter, the other with
Confluent's AvroConverter against a real Schema Registry (Apicurio, tests/real_parts); each topic
prefix landed by `cdc-dbt land` into its own folder and built into its own schema. The same changes
must give the same tables, value for value.

The workload is test_real_postgres_pipeline.py's changes, streamed (each connector's snapshot is a
read of its own, at its own time, so none is taken): every PostgreSQL type a user has, TOAST, a
primary-key update, deletes, a truncate, multi-statement transactions with transaction metadata.
"""

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from cdc_dbt.land import land, topic_selection
from cdc_dbt.settings import Settings
from tests.integration.conftest import Build, DbtProject, rows_query
from tests.integration.test_real_postgres_pipeline import (
    FIRST_CHANGES_SQL,
    SCHEMA_SQL,
    SECOND_CHANGES_SQL,
    SNAPSHOT_SQL,
    wait_for_quiet,
)
from tests.real_parts.debezium_to_kafka import EngineConfig, start_debezium_to_kafka
from tests.real_parts.kafka_broker import KafkaBroker
from tests.real_parts.postgres import start_postgres
from tests.real_parts.schema_registry import SchemaRegistryServer
from udfs import spark as udf_registration
from udfs.schema_registry import URL_VARIABLE

pytestmark = pytest.mark.slow

DATABASE = "twins"
PREFIXES = {"json": "pgtwin_json", "avro": "pgtwin_avro"}
CORE_TABLES = {"cdc_changes", "cdc_current", "cdc_history", "cdc_quarantine", "cdc_transactions"}
DIFFERING_COLUMNS = {"topic", "partition", "offset", "kafka_ts", "event_ts", "begin_ts", "end_ts", "generation"}
"""What two connectors' topics cannot share: the topic and its offsets, when Kafka and each connector
saw an event (`event_ts` is the envelope's `ts_ms`); and the build stamps."""


@pytest.fixture(scope="module")
def twin_builds(
    kafka_broker: KafkaBroker,
    dbt_project: DbtProject,
    session_settings: Settings,
    schema_registry_server: SchemaRegistryServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Build]]:
    folder = tmp_path_factory.mktemp("real-pg-avro")
    with start_postgres(folder / "postgres") as postgres:
        postgres.create_database(DATABASE)
        postgres.execute(SCHEMA_SQL + SNAPSHOT_SQL, database=DATABASE)
        engines = []
        try:
            for kind, prefix in PREFIXES.items():
                config = EngineConfig(
                    bootstrap_servers=kafka_broker.bootstrap_servers,
                    folder=str(folder / f"debezium-{kind}"),
                    database_port=postgres.port,
                    database_name=DATABASE,
                    topic_prefix=prefix,
                    provide_transaction_metadata=True,
                    slot_name=f"slot_{prefix}",
                    # Each connector's snapshot is its own read, at its own time and transaction:
                    # only the changes streamed from the one WAL are the same events in both.
                    snapshot_mode="no_data",
                    publication_name=f"publication_{prefix}",
                    schema_registry_url=schema_registry_server.url if kind == "avro" else None,
                )
                engines.append(start_debezium_to_kafka(config))
            for engine in engines:
                engine.wait_until_streaming()
            before = [engine.status()["records"] for engine in engines]
            postgres.execute(FIRST_CHANGES_SQL + SECOND_CHANGES_SQL, database=DATABASE)
            for engine, count in zip(engines, before, strict=True):
                wait_for_quiet(engine, count)
        finally:
            for engine in engines:
                engine.stop()
    saved = os.environ.get(URL_VARIABLE)
    os.environ[URL_VARIABLE] = schema_registry_server.url
    udf_registration.register(dbt_project.spark)  # as a `cdc-dbt` started with it would
    try:
        builds = {}
        for kind, prefix in PREFIXES.items():
            landing = folder / f"landing-{kind}"
            settings = replace(session_settings, landing_dir=landing, schema=prefix)
            selection = topic_selection(["--pattern", rf"{prefix}\..*"])
            land(dbt_project.spark, settings, selection, {"bootstrap.servers": kafka_broker.bootstrap_servers})
            builds[kind] = dbt_project.build(landing, schema=prefix, data_tests=kind == "avro")
        yield builds
    finally:
        if saved is None:
            os.environ.pop(URL_VARIABLE, None)
        else:
            os.environ[URL_VARIABLE] = saved
        udf_registration.register(dbt_project.spark)


def comparable_rows(build: Build) -> dict[str, list[str]]:
    """Each core table's rows as sorted JSON, without DIFFERING_COLUMNS."""
    by_table: dict[str, list[str]] = {}
    for row in build.rows(rows_query("{schema}", CORE_TABLES)):
        values = {name: value for name, value in json.loads(row["row_json"]).items() if name not in DIFFERING_COLUMNS}
        by_table.setdefault(row["table_name"], []).append(json.dumps(values, sort_keys=True))
    return {table: sorted(rows) for table, rows in by_table.items()}


def test_the_avro_connector_builds_the_tables_of_the_json_one(twin_builds: dict[str, Build]) -> None:
    from_json, from_avro = (comparable_rows(twin_builds[kind]) for kind in ("json", "avro"))
    assert from_json.get("cdc_quarantine", []) == []
    assert len(from_json["cdc_changes"]) >= 12 and len(from_json["cdc_current"]) >= 4
    assert from_avro == from_json


def test_the_avro_topics_were_avro(twin_builds: dict[str, Build]) -> None:
    """Every Avro record was parsed from its bytes: a key or value in the wire format, each."""
    landed: list[Any] = twin_builds["avro"].rows(
        "select count(*) as records, count_if(is_payload_base64 or is_key_base64) as from_bytes"
        " from `{schema}`.int_records_parsed"
    )
    assert landed[0]["records"] >= 15
    assert landed[0]["from_bytes"] == landed[0]["records"]
