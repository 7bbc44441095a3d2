"""The demo and test data generator: deterministic change streams landed as files, with an oracle.

Not part of the runtime (`cdc-dbt` never imports it); the demo's bundled landing, the tests and
the benchmarks are made with it. One module per concern, each importing only those above it:

- `kafka`: Kafka records as they land, shared by every source: message texts, partitions and
  offsets, kcat and Parquet part files.
- `oracle`: the final state every consumer should reach, and its file.
- `inventory`: the simulated PostgreSQL `inventory` tables, their names as Debezium's connector
  gives them and their wire and decoded values.
- `scenario`: the simulated database and the workload run against it (snapshot, transactions).
- `postgres`: Debezium's PostgreSQL connector: Connect schemas, envelopes, positions,
  transaction metadata.
- `qlik`, `mongodb`: the demo's small Qlik Replicate and Debezium MongoDB streams.
- `landing`: `generate`, which writes them all and the oracle.
- `cli`: `python -m cdc_dbt.generator`.
"""

from cdc_dbt.generator.cli import DEMO_PRESET, main
from cdc_dbt.generator.inventory import TOPICS, TRANSACTION_TOPIC
from cdc_dbt.generator.kafka import FORMATS
from cdc_dbt.generator.landing import GenerationSummary, generate, write_other_sources
from cdc_dbt.generator.mongodb import MONGO_TOPIC
from cdc_dbt.generator.qlik import QLIK_DATA_TOPIC, QLIK_METADATA_TOPIC

__all__ = [
    "DEMO_PRESET",
    "FORMATS",
    "MONGO_TOPIC",
    "QLIK_DATA_TOPIC",
    "QLIK_METADATA_TOPIC",
    "TOPICS",
    "TRANSACTION_TOPIC",
    "GenerationSummary",
    "generate",
    "main",
    "write_other_sources",
]
