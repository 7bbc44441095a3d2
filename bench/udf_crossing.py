"""What the converter's schema block costs a Python UDF call just to cross to Python, against the
whole `cdc_parse_record` call.

    python bench/udf_crossing.py [--events 200000] [--keys 20000] [--repeat 2]

Generates the Debezium PostgreSQL stream (kcat lines, JsonConverter with schemas), reads its lines
with Spark's JSON parser and caches the records (not timed). The schema block is cut off in the JVM
(`,"payload":` after `{"schema":`) as the parser would cut it. Then, in one SparkSession, each timed
over every record with Spark's `noop` sink, best of `--repeat`:

- `whole payload`: an Arrow UDF that only takes the payload's length, given the whole payload;
- `payload only`: the same UDF, given the payload without its schema block;
- `payload and schema hash`: given the payload without the block and a 64-bit hash of the block,
  the shape of a call that would pass the schema by reference;
- `cdc_parse_record`: the parser's UDF on the whole payload, for scale.

It prints each time, the crossing the schema block costs (`whole payload` less `payload and schema
hash`) and that as a share of `cdc_parse_record`: what passing the schema by reference could save
at most.
"""

import argparse
import os
import sys
from pathlib import Path

from parse_throughput import best_seconds
from pyspark.sql import SparkSession
from pyspark.sql.functions import udf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _session import product_session, scratch_folder

from generator import generate

RECORDS = """
select
    variant_get(line_json, '$.topic', 'string') as topic,
    variant_get(line_json, '$.partition', 'int') as `partition`,
    variant_get(line_json, '$.offset', 'bigint') as `offset`,
    variant_get(line_json, '$.key', 'string') as key,
    variant_get(line_json, '$.payload', 'string') as payload
from (select try_parse_json(value) as line_json from text.`{landing}`)
"""

CUT = """
select *, substr(payload, 11, cut - 11) as schema_text, substr(payload, cut + 11, length(payload) - cut - 11) as body
from (select *, instr(payload, ',"payload":') as cut from records where payload like '{"schema":%')
"""

CALLS = {
    "whole payload": "select payload_length(payload) from converter_records",
    "payload only": "select payload_length(body) from converter_records",
    "payload and schema hash": "select payload_length(body, xxhash64(schema_text)) from converter_records",
    "cdc_parse_record": "select cdc_parse_record(key, payload, `partition`, `offset`, topic) from converter_records",
}


def payload_length(payload: str | None, _schema_reference: int | None = None) -> int | None:
    return None if payload is None else len(payload)


def best_time(spark: SparkSession, query: str, repeat: int) -> float:
    return best_seconds(lambda: spark.sql(query).write.format("noop").mode("overwrite").save(), repeat)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    with scratch_folder("udf-crossing-") as scratch:
        landing = scratch / "landing"
        print(f"generating {args.events:,} events ...", flush=True)
        generate(landing, events=args.events, keys=args.keys, seed=11)
        os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-memory 4g pyspark-shell")
        with product_session(landing, scratch) as spark:
            spark.udf.register("payload_length", udf(payload_length, "int", useArrow=True))
            spark.sql(RECORDS.format(landing=landing / "dbserver1.*")).createOrReplaceTempView("records")
            records = spark.sql(CUT).cache()
            records.createOrReplaceTempView("converter_records")
            count, schemas, schema_bytes, body_bytes = spark.sql(
                "select count(*), count(distinct schema_text), avg(length(schema_text)), avg(length(body))"
                " from converter_records"
            ).first()
            print(
                f"{count:,} records, {schemas} distinct schema blocks, {schema_bytes:.0f} + {body_bytes:.0f} characters"
            )

            times = {name: best_time(spark, query, args.repeat) for name, query in CALLS.items()}
            for name, seconds in times.items():
                print(f"{name:<26} {seconds:7.2f} s")
            crossing = times["whole payload"] - times["payload and schema hash"]
            share = crossing / times["cdc_parse_record"]
            print(f"the schema block's crossing: {crossing:.2f} s, {share:.0%} of cdc_parse_record")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
