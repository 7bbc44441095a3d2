"""The two forms `udfs.spark.register` can give the `cdc_*` functions, Arrow batches (the default)
and plain pickled rows, hand Spark the same rows: the parsers' records go to both as they are,
tuple fields (arrays) included."""

from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import col, udf

from tests.integration.conftest import DEMO_LANDING
from tests.unit.test_hostile_corpus import LINES
from udfs.spark import FUNCTIONS, arrow_batch_udf

pytestmark = pytest.mark.spark


def landed_and_parsed(lines: DataFrame, form: Any) -> list[tuple[Any, ...]]:
    """Each line through `cdc_parse_kcat_line`, then its record through `cdc_parse_record`, both
    made by `form` (a function of a row function and its Spark type)."""
    parse_kcat_line, parse_record = (form(*FUNCTIONS[name]) for name in ("cdc_parse_kcat_line", "cdc_parse_record"))
    landed = lines.select(col("line"), parse_kcat_line(col("line")).alias("landed"))
    parsed = landed.select(
        "line",
        "landed",
        parse_record("landed.key", "landed.payload", "landed.partition", "landed.offset", "landed.topic").alias(
            "parsed"
        ),
    )
    return sorted((tuple(row) for row in parsed.collect()), key=repr)


# PySpark 4.1 looks for Arrow type hints on any typed function `udf` is given, and warns when the
# hints are a parser's (str, int) rather than Arrow's.
@pytest.mark.filterwarnings("ignore:Cannot infer the eval type from type hints:UserWarning")
def test_arrow_batches_and_pickled_rows_give_the_same_rows(spark: SparkSession) -> None:
    demo_lines = [line for path in sorted(DEMO_LANDING.rglob("*.json")) for line in path.read_text().splitlines()]
    hostile_lines = [text for _, _, text in LINES if isinstance(text, str)]
    lines = spark.createDataFrame([(line,) for line in demo_lines + hostile_lines], "line string")

    in_batches = landed_and_parsed(lines, arrow_batch_udf)
    pickled = landed_and_parsed(lines, lambda function, return_type: udf(function, return_type))

    assert in_batches == pickled
    # Both kinds of array a record holds reached Spark, so that each form took tuples for them.
    assert any(row[1]["headers"] for row in in_batches)
    assert any(row[2]["unavailable_columns"] for row in in_batches)
