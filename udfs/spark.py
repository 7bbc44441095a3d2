"""The one place that knows Spark: registers the parsing core as SQL functions.

Functions (all named `cdc_*` so models show at a glance what is ours):
- `cdc_parse_kcat_line(line)`: one line of `kcat -J` output → struct of the landed record;
- `cdc_parse_record(key, payload, partition, offset, topic)`: one record → struct of the parsed
  change, ignore class or quarantine reason (`topic` optional: it names the table of a flattened
  record without `__table`);
- `cdc_parse_qlik_record(payload, metadata_payload, partition, offset)`: a Qlik data message
  with the metadata message the SQL bound it to → the same struct;
- `cdc_resolve_rows(events)`: a key's ordered events (structs with `op`, `after`,
  `unavailable_columns` and, optionally, `patch`) → the full row after each (carry-forward).

Each is a plain Python UDF or an Arrow-batched one (`arrow=True`); `bench/udf_variants.py`
measures both and the faster is the default.
"""

from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.functions import udf

from udfs.events import ParsedRecord
from udfs.landing import LandedRecord, parse_kcat_line
from udfs.qlik import parse_qlik_record
from udfs.records import parse_record
from udfs.row_images import KeyEvent, resolve_rows

LANDED_RECORD_TYPE = """struct<
    topic: string, partition: int, offset: bigint, kafka_ts_ms: bigint,
    headers: array<struct<key: string, value: string>>,
    key: string, payload: string, reason: string, detail: string>"""

PARSED_RECORD_TYPE = """struct<
    outcome: string, ignore_class: string, reason: string, detail: string,
    source_format: string, connector: string, source_db: string, source_table: string,
    op: string, row_key: string, before: string, after: string,
    unavailable_columns: array<string>, changed_columns: array<string>,
    source_ts_ms: bigint, event_ts_ms: bigint, position: string,
    source_lsn: bigint, source_tx_id: string, source_snapshot: string,
    transaction_id: string, transaction_total_order: bigint,
    transaction_data_collection_order: bigint, patch: string,
    transaction_status: string, transaction_event_count: bigint,
    transaction_collection_counts: string, qlik_schema_id: string>"""

RESOLVED_ROWS_TYPE = "array<string>"

DEFAULT_ARROW = True
"""Arrow batches measured faster than row-at-a-time pickling (bench/README.md)."""


def parse_kcat_line_row(line: str | None) -> tuple[Any, ...] | None:
    if line is None:
        return None
    return _spark_tuple(parse_kcat_line(line))


def parse_record_row(
    key: str | None, payload: str | None, partition: int, offset: int, topic: str | None = None
) -> tuple[Any, ...]:
    return _spark_tuple(parse_record(key, payload, partition, offset, topic))


def parse_qlik_record_row(
    payload: str | None, metadata_payload: str | None, partition: int, offset: int
) -> tuple[Any, ...]:
    return _spark_tuple(parse_qlik_record(payload, metadata_payload, partition, offset))


def resolve_rows_row(events: list[Any] | None) -> list[str | None]:
    if not events:
        return []
    return resolve_rows(
        KeyEvent(event["op"], event["after"], event["unavailable_columns"], event["patch"]) for event in events
    )


FUNCTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "cdc_parse_kcat_line": (parse_kcat_line_row, LANDED_RECORD_TYPE),
    "cdc_parse_record": (parse_record_row, PARSED_RECORD_TYPE),
    "cdc_parse_qlik_record": (parse_qlik_record_row, PARSED_RECORD_TYPE),
    "cdc_resolve_rows": (resolve_rows_row, RESOLVED_ROWS_TYPE),
}


def register(spark: SparkSession, *, arrow: bool = DEFAULT_ARROW) -> None:
    """Register every `cdc_*` function on the session (idempotent)."""
    for name, (function, return_type) in FUNCTIONS.items():
        spark.udf.register(name, udf(function, returnType=return_type, useArrow=arrow))


def _spark_tuple(record: LandedRecord | ParsedRecord) -> tuple[Any, ...]:
    """A record as the tuple Spark takes for a struct: tuple fields become arrays (lists)."""
    return tuple(list(value) if isinstance(value, tuple) else value for value in record)
