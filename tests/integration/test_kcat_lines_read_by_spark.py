"""int_deliveries_loaded reads a plain kcat line with Spark's own JSON parser and sends every other
line to the `cdc_parse_kcat_line` UDF. Both readings must give the same deliveries: this builds the
model over the hostile corpus and lines made to sit on each edge of the routing, and compares every
delivery with what the UDF's parser (`udfs.landing.parse_kcat_line`) makes of its line alone.

A second build, with the UDF replaced by one that marks what it read, checks the routing itself:
each made line goes the way its case says (a plain line to Spark, the rest to the UDF), so the first
test cannot pass by sending everything to the UDF.
"""

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.functions import udf

import udfs.spark as udf_registration
from tests.integration.conftest import Build, DbtProject
from tests.unit.test_hostile_corpus import HOSTILE, README
from udfs.landing import parse_kcat_line

PLAIN = {"topic": "edge", "partition": 0, "tstype": "create", "ts": 1709539200008, "broker": 0}

BY_SPARK = "spark"
BY_UDF = "udf"

# (case, line, who reads it). Each line is the text kcat would have written; the offsets keep every
# delivery apart.
CASES: list[tuple[str, str, str]] = [
    ("plain record", json.dumps({**PLAIN, "offset": 1, "key": '{"id":1}', "payload": '{"op":"c"}'}), BY_SPARK),
    ("tombstone", json.dumps({**PLAIN, "offset": 2, "key": '{"id":1}', "payload": None}), BY_SPARK),
    ("no key, no payload member", json.dumps({"topic": "edge", "partition": 0, "offset": 3}), BY_SPARK),
    ("no timestamp, extra members", json.dumps({**PLAIN, "offset": 4, "ts": None, "x": True, "y": "z"}), BY_SPARK),
    ("timestamp as text", json.dumps({**PLAIN, "offset": 5, "ts": "1709539200008"}), BY_SPARK),
    ("timestamp as boolean", json.dumps({**PLAIN, "offset": 6, "ts": True}), BY_SPARK),
    ("widest timestamp", json.dumps({**PLAIN, "offset": 7, "ts": (2**63 - 1) // 1000}), BY_SPARK),
    ("timestamp one beyond", json.dumps({**PLAIN, "offset": 8, "ts": (2**63 - 1) // 1000 + 1}), BY_SPARK),
    ("negative timestamp beyond", json.dumps({**PLAIN, "offset": 9, "ts": -((2**63 - 1) // 1000) - 1}), BY_SPARK),
    ("timestamp of 64 bits", json.dumps({**PLAIN, "offset": 10, "ts": -(2**63)}), BY_SPARK),
    ("widest partition", json.dumps({**PLAIN, "partition": 2**31 - 1, "offset": 11}), BY_SPARK),
    ("widest offset", json.dumps({**PLAIN, "partition": 1, "offset": 2**63 - 1}), BY_SPARK),
    ("minus zero offset", '{"topic":"edge","partition":2,"offset":-0}', BY_SPARK),
    (
        "escapes and raw text",
        json.dumps({**PLAIN, "offset": 12, "payload": 'é\t"\\/\u0000😀'}, ensure_ascii=False),
        BY_SPARK,
    ),
    ("escaped non-ASCII", json.dumps({**PLAIN, "offset": 13, "payload": "é€"}), BY_SPARK),
    ("whitespace around", ' \t{ "topic" : "edge" , "partition" : 0 , "offset" : 14 }\t ', BY_SPARK),
    ("surrogate pair escape", json.dumps({**PLAIN, "offset": 15, "payload": "😀"}), BY_UDF),
    ("unpaired surrogate", '{"topic":"edge","partition":0,"offset":16,"payload":"\\ud800"}', BY_UDF),
    ("escaped backslash then u", '{"topic":"edge","partition":0,"offset":17,"payload":"\\\\ud800"}', BY_UDF),
    ("headers list", json.dumps({**PLAIN, "offset": 18, "headers": ["a", "1", "b", None]}), BY_UDF),
    ("headers map", json.dumps({**PLAIN, "offset": 19, "headers": {"a": ["1"]}}), BY_UDF),
    ("headers empty", json.dumps({**PLAIN, "offset": 20, "headers": []}), BY_UDF),
    ("headers null", json.dumps({**PLAIN, "offset": 21, "headers": None}), BY_SPARK),
    (
        "Avro-JSON key and payload",
        json.dumps({**PLAIN, "offset": 22, "key": {"id": 1}, "payload": {"op": "c"}}),
        BY_UDF,
    ),
    ("number payload", json.dumps({**PLAIN, "offset": 23, "payload": 12}), BY_UDF),
    ("boolean key", json.dumps({**PLAIN, "offset": 24, "key": False}), BY_UDF),
    ("payload error", json.dumps({**PLAIN, "offset": 25, "payload_error": "Avro decode failed"}), BY_UDF),
    ("empty key error", json.dumps({**PLAIN, "offset": 26, "key_error": ""}), BY_UDF),
    ("null payload error", json.dumps({**PLAIN, "offset": 27, "payload_error": None}), BY_SPARK),
    ("number beyond a double", '{"topic":"edge","partition":0,"offset":28,"broker":1e400}', BY_UDF),
    ("fraction", '{"topic":"edge","partition":0,"offset":29,"broker":1.5}', BY_UDF),
    ("integer beyond 64 bits", '{"topic":"edge","partition":0,"offset":30,"broker":18446744073709551616}', BY_UDF),
    ("nested member", json.dumps({**PLAIN, "offset": 31, "extra": {"a": [1, 2]}}), BY_UDF),
    ("duplicate member", '{"topic":"edge","partition":0,"offset":32,"topic":"edge.other"}', BY_UDF),
    ("trailing text", '{"topic":"edge","partition":0,"offset":33} x', BY_UDF),
    ("two objects", '{"topic":"edge","partition":0,"offset":34}{"topic":"edge","partition":0,"offset":35}', BY_UDF),
    ("two values", '{"topic":"edge","partition":0,"offset":36},{"topic":"edge"}', BY_UDF),
    ("closing brace too many", '{"topic":"edge","partition":0,"offset":37}}', BY_UDF),
    ("byte order mark", '\ufeff{"topic":"edge","partition":0,"offset":38}', BY_UDF),
    ("no-break space after", '{"topic":"edge","partition":0,"offset":39}\u00a0', BY_UDF),
    ("form feed before", '\f{"topic":"edge","partition":0,"offset":40}', BY_UDF),
    ("raw tab in a string", '{"topic":"edge","partition":0,"offset":41,"payload":"a\tb"}', BY_UDF),
    ("empty topic", '{"topic":"","partition":0,"offset":42}', BY_UDF),
    ("topic as number", '{"topic":7,"partition":0,"offset":43}', BY_UDF),
    ("partition beyond 32 bits", json.dumps({**PLAIN, "partition": 2**31, "offset": 44}), BY_UDF),
    ("negative partition", json.dumps({**PLAIN, "partition": -1, "offset": 45}), BY_UDF),
    ("offset beyond 64 bits", json.dumps({**PLAIN, "partition": 3, "offset": 2**63}), BY_UDF),
    ("negative offset", json.dumps({**PLAIN, "partition": 3, "offset": -1}), BY_UDF),
    ("offset as text", '{"topic":"edge","partition":0,"offset":"46"}', BY_UDF),
    ("offset with a fraction", '{"topic":"edge","partition":0,"offset":47.0}', BY_UDF),
    ("single quotes", "{'topic':'edge','partition':0,'offset':48}", BY_UDF),
    ("trailing comma", '{"topic":"edge","partition":0,"offset":49,}', BY_UDF),
    ("leading zero", '{"topic":"edge","partition":0,"offset":050}', BY_UDF),
    ("NaN member", '{"topic":"edge","partition":0,"offset":51,"broker":NaN}', BY_UDF),
    ("array line", '[{"topic":"edge","partition":0,"offset":52}]', BY_UDF),
    ("string line", '"edge"', BY_UDF),
]


@pytest.fixture(scope="module")
def landing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    landing = tmp_path_factory.mktemp("kcat-edges")
    for path in HOSTILE.iterdir():
        if path != README:
            shutil.copy(path, landing / path.name)
    (landing / "edges.jsonl").write_text("".join(line + "\n" for _, line, _ in CASES), encoding="utf-8")
    return landing


def deliveries(build: Build) -> Counter[tuple[Any, ...]]:
    """The model's deliveries, less the lines that are not UTF-8 (they reach neither parser)."""
    rows = build.rows(
        """
        select topic, `partition`, `offset`, unix_millis(kafka_ts) as kafka_ts_ms, headers, key, payload,
            landing_reason, landing_detail
        from `{schema}`.int_deliveries_loaded
        where landing_reason is distinct from 'invalid_encoding'
        """
    )
    columns = ("topic", "partition", "offset", "kafka_ts_ms", "headers", "key", "payload")
    return Counter(
        (
            *(row[column] for column in columns[:4]),
            tuple((header["key"], header["value"]) for header in row["headers"]),
            *(row[column] for column in (*columns[5:], "landing_reason", "landing_detail")),
        )
        for row in rows
    )


def deliveries_by_the_parser(spark: SparkSession, landing: Path) -> Counter[tuple[Any, ...]]:
    """What the UDF's parser makes of each line Spark's text source reads, as the model keeps it (a
    line that is no record keeps its whole text as the payload)."""
    lines = spark.read.text(str(landing)).where("trim(value) != '' and is_valid_utf8(value)").collect()
    expected: Counter[tuple[Any, ...]] = Counter()
    for (line,) in lines:
        record = parse_kcat_line(line)
        payload = line if record.reason == "invalid_landing_line" else record.payload
        expected[
            record.topic, record.partition, record.offset, record.kafka_ts_ms, record.headers,
            record.key, payload, record.reason, record.detail,
        ] += 1  # fmt: skip
    return expected


def test_both_readings_give_the_deliveries_the_parser_gives(
    dbt_project: DbtProject, landing: Path, spark: SparkSession
) -> None:
    build = dbt_project.build(landing, schema="kcat_edges", select="+int_deliveries_loaded", data_tests=False)
    actual = deliveries(build)
    expected = deliveries_by_the_parser(spark, landing)
    assert actual - expected == Counter(), "deliveries the parser does not give"
    assert expected - actual == Counter(), "deliveries the parser gives that the model does not"


def test_each_made_line_is_read_where_its_case_says(
    dbt_project: DbtProject, landing: Path, spark: SparkSession
) -> None:
    def marked_by_the_udf(line: str | None) -> tuple[Any, ...] | None:
        record = udf_registration.parse_kcat_line_row(line)
        return None if record is None else (*record[:7], "read_by_the_udf", None)

    spark.udf.register(
        "cdc_parse_kcat_line", udf(marked_by_the_udf, returnType=udf_registration.LANDED_RECORD_TYPE, useArrow=True)
    )
    try:
        build = dbt_project.build(
            landing, schema="kcat_edges_routed", select="+int_deliveries_loaded", data_tests=False, full_refresh=True
        )
    finally:
        udf_registration.register(spark)
    rows = build.rows(
        "select `offset`, landing_reason from `{schema}`.int_deliveries_loaded where topic = 'edge' or topic is null"
    )
    read_by = {row["offset"]: BY_UDF if row["landing_reason"] == "read_by_the_udf" else BY_SPARK for row in rows}
    for case, line, expected in CASES:
        record = parse_kcat_line(line)
        if record.topic == "edge" and record.offset is not None:
            assert read_by.get(record.offset) == expected, f"{case}: {line!r}"
        else:  # the parser reads another record, or none: only the UDF can give that reading
            assert expected == BY_UDF, f"{case}: the parser does not read {line!r} as an `edge` record"
    assert Counter(read_by.values())[BY_SPARK] == sum(1 for *_, by in CASES if by == BY_SPARK)
