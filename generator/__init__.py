"""The demo and test data generator: deterministic change streams landed as files, with an oracle.

Not part of the runtime (`cdc-dbt` never imports it): it lives in the checkout beside bench/ and
tests/, outside the wheel (pyproject.toml), and its users run from a checkout. The demo's bundled
landing (demo/landing, which the wheel carries), the tests and the benchmarks are made with it. One
module per concern, each importing only those above it:

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
- `cli`: `python -m generator`.
"""

from generator.cli import DEMO_PRESET, main
from generator.inventory import TOPICS, TRANSACTION_TOPIC
from generator.kafka import FORMATS
from generator.landing import GenerationSummary, generate, write_other_sources
from generator.mongodb import MONGO_TOPIC
from generator.qlik import QLIK_DATA_TOPIC, QLIK_METADATA_TOPIC

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
