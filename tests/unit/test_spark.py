"""The Spark types of the UDFs' results, derived from the record types, and the Arrow columns the
UDFs return (no JVM)."""

import gc
from typing import Any, NamedTuple

import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import ArrayType, DataType, LongType, StringType, StructType

from tests.unit.test_hostile_corpus import LINES
from udfs.events import ParsedRecord
from udfs.landing import LandedRecord
from udfs.spark import (
    LANDED_RECORD_TYPE,
    PARSED_RECORD_TYPE,
    arrow_column,
    collection_paused,
    over_arrow_batches,
    parse_kcat_line_row,
    struct_type,
)

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
    column = arrow_column([ParsedRecord(**values)], to_arrow_type(PARSED_RECORD_TYPE))
    assert list(column.to_pylist()[0].items()) == [
        (name, list(value) if isinstance(value, tuple) else value) for name, value in values.items()
    ]


def test_a_field_without_a_spark_type_is_named() -> None:
    class Unmapped(NamedTuple):
        ratio: float | None = None

    with pytest.raises(TypeError, match="field ratio"):
        struct_type(Unmapped)


def test_a_batch_of_results_becomes_the_arrow_column_spark_reads() -> None:
    lines = [text for _, _, text in LINES if isinstance(text, str)] + [None]  # the build keeps bytes from Python
    batch = pa.array(lines, type=pa.string())
    column = over_arrow_batches(parse_kcat_line_row, LANDED_RECORD_TYPE)(batch)
    expected = [parse_kcat_line_row(line) for line in lines]
    assert column.type == to_arrow_type(LANDED_RECORD_TYPE)
    assert column.to_pylist() == [None if row is None else as_arrow_row(row, LANDED_RECORD_TYPE) for row in expected]
    assert column.null_count == 1  # a null line is a null record, not a record of nulls


def test_an_empty_batch_is_an_empty_column() -> None:
    column = over_arrow_batches(parse_kcat_line_row, LANDED_RECORD_TYPE)(pa.array([], type=pa.string()))
    assert len(column) == 0
    assert column.type == to_arrow_type(LANDED_RECORD_TYPE)


def as_arrow_row(row: tuple[Any, ...], spark_type: StructType) -> dict[str, Any]:
    """A result tuple as Arrow gives a struct back: fields by name, nested structs as dicts."""
    values = {}
    for field, value in zip(spark_type.fields, row, strict=True):
        if isinstance(field.dataType, ArrayType) and isinstance(field.dataType.elementType, StructType):
            names = field.dataType.elementType.names
            value = [dict(zip(names, item, strict=True)) for item in value]
        values[field.name] = value
    return values


def test_the_collector_is_paused_for_a_batch_and_resumed_after_it() -> None:
    seen: list[bool] = []

    def row_function(line: str | None) -> LandedRecord | None:
        seen.append(gc.isenabled())
        return parse_kcat_line_row(line)

    assert gc.isenabled()
    over_arrow_batches(row_function, LANDED_RECORD_TYPE)(pa.array(["{}", None], type=pa.string()))
    assert seen == [False, False]
    assert gc.isenabled()


def test_the_collector_resumes_after_a_batch_that_raised_and_stays_paused_if_it_was() -> None:
    with pytest.raises(ZeroDivisionError), collection_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # paused by someone else: theirs to resume
    finally:
        gc.enable()
