"""The Spark types of the UDFs' results, derived from the record types (no JVM: types only)."""

from typing import Any, NamedTuple

import pytest
from pyspark.sql.types import ArrayType, DataType, LongType, StringType

from udfs.events import ParsedRecord
from udfs.spark import PARSED_RECORD_TYPE, _spark_tuple, struct_type

STRING, BIGINT, STRINGS = StringType(), LongType(), ArrayType(StringType(), containsNull=True)
PARSED_RECORD_FIELDS: list[tuple[str, DataType]] = [
    ("outcome", STRING),
    ("ignore_class", STRING),
    ("reason", STRING),
    ("detail", STRING),
    ("source_format", STRING),
    ("connector", STRING),
    ("source_db", STRING),
    ("source_table", STRING),
    ("op", STRING),
    ("row_key", STRING),
    ("before", STRING),
    ("after", STRING),
    ("unavailable_columns", STRINGS),
    ("changed_columns", STRINGS),
    ("source_ts_ms", BIGINT),
    ("event_ts_ms", BIGINT),
    ("position", STRING),
    ("source_lsn", BIGINT),
    ("source_tx_id", STRING),
    ("source_snapshot", STRING),
    ("transaction_id", STRING),
    ("transaction_total_order", BIGINT),
    ("transaction_data_collection_order", BIGINT),
    ("patch", STRING),
    ("transaction_status", STRING),
    ("transaction_event_count", BIGINT),
    ("transaction_collection_counts", STRING),
    ("qlik_schema_id", STRING),
]
"""The struct `cdc_parse_record` and `cdc_parse_qlik_record` return, field for field, as the models
read it: a change here is a change to every model downstream, never a side effect of a refactoring."""


def test_parsed_record_type_is_the_struct_the_models_read() -> None:
    assert [(field.name, field.dataType) for field in PARSED_RECORD_TYPE.fields] == PARSED_RECORD_FIELDS
    assert all(field.nullable and not field.metadata for field in PARSED_RECORD_TYPE.fields)


def test_a_parsed_record_becomes_a_row_in_the_struct_order() -> None:
    # Every field a value of its own, so that a field out of place shows.
    values: dict[str, Any] = {}
    for index, (name, kind) in enumerate(PARSED_RECORD_FIELDS):
        values[name] = {BIGINT: index, STRINGS: (name, "second")}.get(kind, f"{name} value")
    row = PARSED_RECORD_TYPE.fromInternal(_spark_tuple(ParsedRecord(**values)))
    assert list(row.asDict().items()) == [
        (name, list(value) if isinstance(value, tuple) else value) for name, value in values.items()
    ]


def test_a_field_without_a_spark_type_is_named() -> None:
    class Unmapped(NamedTuple):
        ratio: float | None = None

    with pytest.raises(TypeError, match="field ratio"):
        struct_type(Unmapped)
