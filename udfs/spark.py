"""The one place that knows Spark: registers the parsing core as SQL functions.

Functions (all named `cdc_*` so models show at a glance what is ours):
- `cdc_parse_kcat_line(line)`: one line of `kcat -J` output → struct of the landed record;
- `cdc_parse_record(key, payload, partition, offset, topic, is_key_base64, is_payload_base64)`: one
  record → struct of the parsed change, ignore class or quarantine reason (`topic` optional: it
  names the table of a flattened record without `__table`; the two flags optional: a key or
  payload given as the base64 of its bytes, Avro in a Schema Registry's wire format);
- `cdc_parse_held_record(...)`: `cdc_parse_record` again, for a record held for the Schema
  Registry: declared nondeterministic (the registry may answer now and not a moment later), so
  that Spark calls it once per row and never moves a filter on its result below it;
- `cdc_parse_qlik_record(payload, metadata_payload, partition, offset)`: a Qlik data message
  with the metadata message the SQL bound it to → the same struct;
- `cdc_resolve_rows(events)`: a key's ordered events (structs with `op`, `after`,
  `unavailable_columns` and, optionally, `patch`) → the full row after each (carry-forward).

The Schema Registry settings (`CDC_SCHEMA_REGISTRY_*`, udfs/schema_registry.py) are read by the
Python workers from their environment: `register` hands the driver's to them (Spark's
`executorEnv`, which reaches a cluster's executors too, where the environment is not inherited).

Each is an Arrow UDF over whole batches (`arrow=True`, the default: the row function runs on each
row, but its arguments and results cross as Arrow columns built once per batch), or a plain Python
UDF called row by row; `bench/udf_variants.py` measures the forms.
"""

import gc
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import NoneType, UnionType
from typing import Any, NamedTuple, get_args, get_origin, get_type_hints

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.functions import udf
from pyspark.sql.pandas.functions import arrow_udf
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import ArrayType, DataType, IntegerType, LongType, StringType, StructField, StructType

from udfs.events import ParsedRecord
from udfs.landing import LandedRecord, parse_kcat_line
from udfs.qlik import parse_qlik_record
from udfs.records import parse_landed_record
from udfs.row_images import KeyEvent, resolve_rows
from udfs.schema_registry import URL_VARIABLE, USER_INFO_VARIABLE

# Written out, not derived from `LandedRecord`: its `partition` is a 32-bit `int` and its headers are
# structs whose field names (`key`, `value`) no annotation carries.
LANDED_RECORD_TYPE = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("kafka_ts_ms", LongType()),
        StructField(
            "headers", ArrayType(StructType([StructField("key", StringType()), StructField("value", StringType())]))
        ),
        StructField("key", StringType()),
        StructField("payload", StringType()),
        StructField("reason", StringType()),
        StructField("detail", StringType()),
    ]
)

SPARK_TYPES: dict[Any, DataType] = {
    str: StringType(),
    # `bigint`: every integer the parsing core returns is checked to fit one (`udfs.debezium.int_field`).
    int: LongType(),
    # Tuples are how the core keeps a list immutable; Spark takes them for arrays as they are.
    tuple[str, ...]: ArrayType(StringType()),
}
"""The Spark type of each Python type a record's field is annotated with (`X | None` is `X`)."""


def struct_type(record: type[NamedTuple]) -> StructType:
    """The Spark struct of a record type: its fields, in order, typed by `SPARK_TYPES`.

    Every field is nullable whatever its annotation (`outcome` always has a value), as the fields
    of a struct written in DDL are: a NOT NULL field would narrow the type the models read.
    """
    hints = get_type_hints(record)
    return StructType([StructField(name, _spark_type(name, hints[name])) for name in record._fields])


def _spark_type(name: str, annotation: Any) -> DataType:
    members = get_args(annotation) if get_origin(annotation) is UnionType else (annotation,)
    present = [member for member in members if member is not NoneType]
    spark_type = SPARK_TYPES.get(present[0]) if len(present) == 1 else None
    if spark_type is None:
        raise TypeError(f"no Spark type for field {name}: {annotation} (add one to SPARK_TYPES)")
    return spark_type


PARSED_RECORD_TYPE = struct_type(ParsedRecord)

RESOLVED_ROWS_TYPE = ArrayType(StringType())

DEFAULT_ARROW = True
"""Whole Arrow batches measured faster than rows pickled or converted one by one (bench/README.md)."""


def parse_kcat_line_row(line: str | None) -> LandedRecord | None:
    if line is None:
        return None
    return parse_kcat_line(line)


def resolve_rows_row(events: list[Any] | None) -> list[str | None]:
    if not events:
        return []
    return resolve_rows(
        KeyEvent(event["op"], event["after"], event["unavailable_columns"], event["patch"]) for event in events
    )


# A record (a named tuple, its lists tuples) is the row Spark takes for its struct, as it is: both
# `arrow_column` and the pickled rows accept tuples for arrays and structs (PySpark's row-at-a-time
# Arrow UDF, `useArrow=True`, would not). So the parsers are registered as they are, and a row
# function only adapts what Spark passes or expects otherwise.
FUNCTIONS: dict[str, tuple[Callable[..., Any], DataType]] = {
    "cdc_parse_kcat_line": (parse_kcat_line_row, LANDED_RECORD_TYPE),
    "cdc_parse_record": (parse_landed_record, PARSED_RECORD_TYPE),
    "cdc_parse_held_record": (parse_landed_record, PARSED_RECORD_TYPE),
    "cdc_parse_qlik_record": (parse_qlik_record, PARSED_RECORD_TYPE),
    "cdc_resolve_rows": (resolve_rows_row, RESOLVED_ROWS_TYPE),
}


NONDETERMINISTIC = frozenset({"cdc_parse_held_record"})
"""Functions whose result depends on more than their arguments (a Schema Registry's answer)."""

WORKER_VARIABLES = (URL_VARIABLE, USER_INFO_VARIABLE)
"""What the Python workers read from their environment: the Schema Registry and its credentials."""


def register(spark: SparkSession, *, arrow: bool = DEFAULT_ARROW) -> None:
    """Register every `cdc_*` function on the session (idempotent), with the driver's WORKER_VARIABLES
    as they are now."""
    pass_worker_variables(spark, os.environ)
    for name, (function, return_type) in FUNCTIONS.items():
        spark_function = arrow_batch_udf(function, return_type) if arrow else udf(function, returnType=return_type)
        if name in NONDETERMINISTIC:
            spark_function = spark_function.asNondeterministic()
        spark.udf.register(name, spark_function)


def pass_worker_variables(spark: SparkSession, environ: Mapping[str, str]) -> None:
    """Each of WORKER_VARIABLES set in `environ` goes to the Python workers of the functions registered
    from now on (PySpark sends `SparkContext.environment` with each function, as
    `spark.executorEnv.*` would); one not set there is left to the workers' own environment (a
    cluster's executors may set it). Spark keeps a pool of workers per distinct environment, so a
    changed setting also gets workers that remember no schema and no failure of the old one."""
    worker_environment = spark.sparkContext.environment
    for name in WORKER_VARIABLES:
        if name in environ:
            worker_environment[name] = environ[name]
        else:
            worker_environment.pop(name, None)


def arrow_batch_udf(row_function: Callable[..., Any], return_type: DataType) -> Any:
    """The Arrow UDF of `row_function` over whole batches (`over_arrow_batches`)."""
    # The batch function's type hints (`pa.Array` in and out) make it a scalar Arrow UDF.
    return arrow_udf(over_arrow_batches(row_function, return_type), return_type)  # type: ignore[call-overload]


def over_arrow_batches(row_function: Callable[..., Any], return_type: DataType) -> Callable[..., pa.Array]:
    """`row_function` applied to each row of a batch of Arrow columns, its results one Arrow column.

    The arguments become Python values a column at a time, and the results are built into the
    column a field at a time: PySpark's row-at-a-time Arrow UDF (`useArrow=True`) converts each
    result row by row, which cost more than half of what the parsing itself does (bench/README.md).
    """
    arrow_type = to_arrow_type(return_type)

    def over_batch(*columns: pa.Array) -> pa.Array:
        with collection_paused():
            rows = zip(*(column.to_pylist() for column in columns), strict=True)
            results = [row_function(*arguments) for arguments in rows]
            return arrow_column(results, arrow_type)

    return over_batch


@contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for one batch, and resumed after it.

    A batch's results wait for its column: ten thousand records or more, named tuples, which the
    collector tracks (it stops tracking plain tuples of texts, never their subclasses). Each 700
    container objects made and not yet freed start a collection of the young ones, which walks
    them, every tenth the older ones too, and now and then every object in the worker (PySpark's
    and pyarrow's modules): 2 to 3 µs a line (`bench/core_versions.py`). It finds nothing: the
    parsing core makes no reference cycles, and reference counting frees all a batch made once
    its column is built.

    Safe in a long-lived worker: the collector is paused for one batch at a time and never
    reconfigured, so garbage in cycles (none from the core; any PySpark makes meanwhile) waits at
    most until the batch's end, and the collector, counting what the batch left, takes it at its
    next threshold as before. Nothing is frozen, so memory cannot grow from one batch to the next.
    """
    if not gc.isenabled():  # already paused (by a caller, or the worker's own settings): theirs to resume
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def arrow_column(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """An Arrow column of `values`; a struct column from tuples of its fields (None: a null struct)."""
    if not pa.types.is_struct(arrow_type) or not values:
        return pa.array(values, type=arrow_type)
    fields = list(arrow_type)
    nulls = [value is None for value in values]
    rows = [(None,) * len(fields) if value is None else value for value in values]
    by_field = zip(*rows, strict=True)
    field_columns = [pa.array(column, type=field.type) for column, field in zip(by_field, fields, strict=True)]
    mask = pa.array(nulls) if any(nulls) else None
    return pa.StructArray.from_arrays(field_columns, fields=fields, mask=mask)
