"""Generated Debezium PostgreSQL streams (generator) against the generator's own oracle.

The generator knows the true final state of its simulated database; a build over its landed
records, in either landing format or both at once, must reach exactly that state.
"""

import json
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow.parquet as pq
import pytest

from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from generator import MONGO_TOPIC, QLIK_DATA_TOPIC, TRANSACTION_TOPIC, generate
from tests.integration.conftest import DEMO_LANDING, Build, DbtProject

DEMO_ORACLE = PACKAGE_PROJECT_DIR / "demo" / "expected_final_state.json"


def without_nulls(row: dict[str, Any]) -> dict[str, Any]:
    """A null column and an absent one mean the same to a consumer (a Qlik column added by a
    later table version is absent from older rows' JSON, null in the source)."""
    return {column: value for column, value in row.items() if value is not None}


def current_state(build: Build) -> dict[str, dict[str, Any]]:
    state: dict[str, dict[str, Any]] = {}
    for row in build.rows("select source_table, row_key, row from `{schema}`.cdc_current"):
        state.setdefault(row["source_table"], {})[row["row_key"]] = without_nulls(json.loads(row["row"]))
    return state


def oracle(path: Path) -> dict[str, dict[str, Any]]:
    return {
        table: {key: without_nulls(row) for key, row in rows.items()}
        for table, rows in json.loads(path.read_text()).items()
        if rows
    }


def test_bundled_demo_reaches_the_generators_final_state(demo_build: Build) -> None:
    """PostgreSQL, Qlik Replicate (masks, a second table version) and MongoDB (updateDescription)."""
    expected = oracle(DEMO_ORACLE)
    assert {"inventory.customers", "HR.EMPLOYEES", "shop.reviews"} <= expected.keys()
    assert current_state(demo_build) == expected
    assert demo_build.table("cdc_quarantine") == []


def test_every_transaction_of_the_demo_is_complete(demo_build: Build) -> None:
    transaction_records = [
        json.loads(line) for path in (DEMO_LANDING / TRANSACTION_TOPIC).rglob("*.json") for line in path.open()
    ]
    markers = [json.loads(record["payload"])["payload"] for record in transaction_records]
    ends = [marker for marker in markers if marker["status"] == "END"]
    transactions = demo_build.rows(
        "select transaction_id, status, expected_event_count, landed_event_count, is_complete"
        " from `{schema}`.cdc_transactions where source_format = 'debezium'"
    )
    assert ends and len(transactions) == len(ends)
    assert all(row["is_complete"] and row["status"] == "END" for row in transactions)
    assert {row["transaction_id"]: row["landed_event_count"] for row in transactions} == {
        end["id"]: end["event_count"] for end in ends
    }


def test_every_qlik_transaction_of_the_demo_is_complete_with_its_events_counted(demo_build: Build) -> None:
    """Qlik numbers the events of a transaction and marks the last: the demo's stream lands whole."""
    events: dict[str, set[int]] = {}
    for path in (DEMO_LANDING / "qlik.HR.EMPLOYEES").rglob("*.json"):
        for line in path.open():
            headers = json.loads(json.loads(line)["payload"])["message"]["headers"]
            if headers["transactionId"]:
                events.setdefault(headers["transactionId"], set()).add(headers["transactionEventCounter"])
    transactions = demo_build.rows(
        "select transaction_id, status, expected_event_count, landed_event_count, is_complete"
        " from `{schema}`.cdc_transactions where source_format = 'qlik'"
    )
    assert events and {row["transaction_id"]: row["landed_event_count"] for row in transactions} == {
        transaction_id: len(numbers) for transaction_id, numbers in events.items()
    }
    assert all(
        row["is_complete"] and row["status"] == "END" and row["expected_event_count"] == row["landed_event_count"]
        for row in transactions
    )


def python_rows_returned(node: Any) -> int:
    """Rows the Python workers returned to the UDF nodes of an executed plan (Spark's metric)."""
    returned = int(node.metrics().apply("pythonNumRowsReceived").value()) if "EvalPython" in node.nodeName() else 0
    children = node.children()
    return returned + sum(python_rows_returned(children.apply(index)) for index in range(children.size()))


def test_each_record_goes_through_the_parser_once(demo_build: Build, dbt_project: DbtProject) -> None:
    """Spark plans every reference to a UDF's result separately: int_records_parsed_unbound must
    reference it once per record, or every record is parsed again per reference (the Qlik binding
    once made it 13 times). Its query, run whole: the parser returned exactly one row per record
    (its records delivered once and the first deliveries of the others are parsed in two branches
    of a union, each record in one)."""
    compiled = dbt_project.compile_model(
        "int_records_parsed_unbound", DEMO_LANDING, demo_build.schema, {"example_marts": True}
    )
    query = demo_build.spark.sql(compiled)
    records = query.collect()
    plan = query._jdf.queryExecution().executedPlan()
    assert "cdc_parse_record" in plan.toString()
    assert python_rows_returned(plan) == len(records) > 0


def test_the_parsed_records_keep_the_payload_of_every_record_but_a_change(demo_build: Build) -> None:
    """A change's payload stays in the deliveries only; every other record keeps its own."""
    payloads = demo_build.rows(
        """
        select parsed.outcome, parsed.payload is null as is_left_out,
            parsed.payload <=> deliveries.payload as is_the_delivered_payload
        from `{schema}`.int_records_parsed as parsed
        join `{schema}`.int_deliveries_loaded as deliveries
            on parsed.topic = deliveries.topic
            and parsed.`partition` = deliveries.`partition`
            and parsed.`offset` = deliveries.`offset`
        where deliveries.payload is not null
        """
    )
    changes = [row for row in payloads if row["outcome"] == "change"]
    others = [row for row in payloads if row["outcome"] != "change"]
    assert changes and all(row["is_left_out"] for row in changes)
    assert others and all(row["is_the_delivered_payload"] for row in others)


def test_the_tables_are_parquet_compressed_with_zstd(demo_build: Build) -> None:
    """Every column of every table file: the tables hold JSON text, which zstd stores in well
    under half the space of Spark's default, snappy (bench/parquet_codec.py)."""
    warehouse = Path(urlparse(demo_build.spark.conf.get("spark.sql.warehouse.dir")).path)
    files = list((warehouse / f"{demo_build.schema}.db").rglob("*.parquet"))
    codecs = Counter(
        metadata.row_group(group).column(column).compression
        for metadata in (pq.ParquetFile(file).metadata for file in files)
        for group in range(metadata.num_row_groups)
        for column in range(metadata.num_columns)
    )
    assert {file.parent.name for file in files} >= {"int_deliveries_loaded", "int_records_parsed_unbound"}
    assert set(codecs) == {"ZSTD"}, codecs


def test_same_records_in_kcat_and_parquet_count_once(dbt_project: DbtProject, tmp_path: Path) -> None:
    expected = tmp_path / "expected.json"
    kcat, _ = (
        generate(
            tmp_path / "landing" / fmt, events=300, keys=60, seed=11, partitions=3, fmt=fmt, expected_path=expected
        )
        for fmt in ("kcat", "parquet")
    )
    build = dbt_project.build(
        tmp_path / "landing", schema="both_formats", select="+cdc_current +cdc_history +cdc_changes +cdc_reconciliation"
    )
    assert current_state(build) == oracle(expected)
    duplicates = build.rows(
        "select topic, `partition`, `offset` from `{schema}`.cdc_changes group by 1, 2, 3 having count(*) > 1"
    )
    assert duplicates == []
    reconciliation = build.rows(
        "select sum(landed_deliveries) as deliveries, sum(duplicate_deliveries) as duplicates,"
        " sum(unaccounted) as unaccounted from `{schema}`.cdc_reconciliation"
    )[0]
    # Every record landed twice, once per format.
    assert reconciliation == {
        "deliveries": 2 * sum(kcat.per_topic.values()),
        "duplicates": sum(kcat.per_topic.values()),
        "unaccounted": 0,
    }

    # A change made to vanish from cdc_changes: the reconciliation test fails the build.
    build.rows(
        "create table `{schema}`.changes_but_one as select * from `{schema}`.cdc_changes"
        " where struct(topic, `partition`, `offset`)"
        " != (select min(struct(topic, `partition`, `offset`)) from `{schema}`.cdc_changes)"
    )
    build.rows("create or replace view `{schema}`.cdc_changes as select * from `{schema}`.changes_but_one")
    with pytest.raises(AssertionError, match="every_landed_record_is_accounted_for"):
        dbt_project.build(tmp_path / "landing", schema="both_formats", select="cdc_reconciliation+")


def test_truncate_ends_every_order_written_before_it(demo_build: Build) -> None:
    build = demo_build
    truncates = build.rows("select source_position from `{schema}`.cdc_changes where op = 't'")
    assert len(truncates) == 1
    open_before_truncate = build.rows(
        "select * from `{schema}`.cdc_history where source_table = 'inventory.orders'"
        f" and source_position < '{truncates[0]['source_position']}' and (is_current or ended_by is null)"
    )
    assert open_before_truncate == []
    assert build.rows("select * from `{schema}`.cdc_history where ended_by = 't'")


@pytest.mark.parametrize("treat_tombstones_as_deletes", [False, True])
def test_tombstone_policy(dbt_project: DbtProject, tmp_path: Path, treat_tombstones_as_deletes: bool) -> None:
    """Deletes reaching Kafka only as tombstones: ignored by default, deletes under the variable."""
    landing = tmp_path / "landing"
    shutil.copytree(DEMO_LANDING, landing)
    deleted_keys = set()
    deletes_per_transaction: Counter[str] = Counter()
    # The PostgreSQL and MongoDB topics' deletes become tombstones only (a MongoDB tombstone's key
    # `{"id": "<extended JSON>"}` must still find its document `{"_id": ...}`); Qlik has none.
    for path in [*landing.glob("dbserver1.*/*.json"), *landing.glob(f"{MONGO_TOPIC}/*.json")]:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        kept = []
        for record in records:
            message = json.loads(record["payload"]) if record["payload"] else None
            envelope = message.get("payload", message) if message else None
            if envelope and envelope.get("op") == "d":
                deleted_keys.add((path.parent.name, record["key"]))
                if envelope["transaction"]:
                    deletes_per_transaction[envelope["transaction"]["id"]] += 1
                continue
            kept.append(record)
        path.write_text("".join(json.dumps(record) + "\n" for record in kept))
    assert {topic for topic, _ in deleted_keys} >= {MONGO_TOPIC, "dbserver1.inventory.customers"}
    assert deleted_keys, "the demo stream must hold deletes"

    schema = f"tombstones_{str(treat_tombstones_as_deletes).lower()}"
    build = dbt_project.build(
        landing,
        schema,
        {"treat_tombstones_as_deletes": treat_tombstones_as_deletes},
        select="+cdc_current +cdc_history +cdc_transactions",
    )
    expected = oracle(DEMO_ORACLE)
    actual = current_state(build)
    inventory_versions = (
        "select * from `{schema}`.cdc_history where (source_table like 'inventory.%' or source_table = 'shop.reviews')"
    )
    if treat_tombstones_as_deletes:
        assert actual == expected
        assert build.rows(f"{inventory_versions} and ended_by = 'd'")
    else:
        assert sum(map(len, actual.values())) > sum(map(len, expected.values()))
        assert build.rows(f"{inventory_versions} and ended_by = 'd'") == []
    # The transactions whose delete events were taken away are exactly the incomplete ones.
    incomplete = build.rows(
        "select transaction_id, expected_event_count - landed_event_count as missing"
        " from `{schema}`.cdc_transactions where source_format = 'debezium' and not is_complete"
    )
    assert {row["transaction_id"]: row["missing"] for row in incomplete} == deletes_per_transaction


def test_typed_marts_hold_the_oracle_values_with_their_types(demo_build: Build) -> None:
    expected = oracle(DEMO_ORACLE)
    products = demo_build.rows("select product_id, product_name, weight, price from `{schema}`.products_current")
    assert {row["product_id"]: (row["product_name"], row["weight"], str(row["price"])) for row in products} == {
        row["id"]: (row["name"], row.get("weight"), row["price"]) for row in expected["inventory.products"].values()
    }
    customers = demo_build.rows("select customer_id, updated_at from `{schema}`.customers_current")
    assert {row["customer_id"]: row["updated_at"].isoformat(timespec="microseconds") for row in customers} == {
        row["id"]: row["updated_at"] for row in expected["inventory.customers"].values()
    }
    orders = demo_build.rows("select order_id, order_date from `{schema}`.orders_current")
    assert {row["order_id"]: row["order_date"].isoformat() for row in orders} == {
        row["id"]: row["order_date"] for row in expected["inventory.orders"].values()
    }
    history = demo_build.rows(
        "select count(*) as versions, count(distinct product_id) as products from `{schema}`.products_history"
    )[0]
    assert history["versions"] > history["products"] >= len(expected["inventory.products"])


def test_qlik_and_mongodb_marts_hold_the_oracle_values_with_their_types(demo_build: Build) -> None:
    expected = oracle(DEMO_ORACLE)
    employees = demo_build.rows(
        "select employee_id, first_name, salary, hire_date, department from `{schema}`.employees_current"
    )
    assert {
        row["employee_id"]: without_nulls(
            {
                "FIRST_NAME": row["first_name"],
                "SALARY": str(row["salary"]),
                "HIRE_DATE": row["hire_date"].isoformat(),
                "DEPARTMENT": row["department"],
            }
        )
        for row in employees
    } == {
        row["EMPLOYEE_ID"]: {
            column: value
            for column, value in row.items()
            if column in ("FIRST_NAME", "SALARY", "HIRE_DATE", "DEPARTMENT")
        }
        for row in expected["HR.EMPLOYEES"].values()
    }
    reviews = demo_build.rows(
        "select review_id, product_id, rating, review_text, tags, votes from `{schema}`.reviews_current"
    )
    assert {
        row["review_id"]: without_nulls(
            {
                "_id": row["review_id"],
                "product_id": row["product_id"],
                "rating": row["rating"],
                "text": row["review_text"],
                "tags": row["tags"],
                "votes": row["votes"],
            }
        )
        for row in reviews
    } == {row["_id"]: row for row in expected["shop.reviews"].values()}
    versions = demo_build.rows(
        "select count(*) as versions, count(distinct employee_id) as employees from `{schema}`.employees_history"
    )[0]
    assert versions["versions"] > versions["employees"] >= len(expected["HR.EMPLOYEES"])


def test_schema_drift_reports_the_column_qliks_table_version_2_added(demo_build: Build) -> None:
    messages = [
        json.loads(json.loads(line)["payload"])["message"]
        for path in (DEMO_LANDING / QLIK_DATA_TOPIC).glob("*.json")
        for line in path.open()
    ]
    row_images = [message for message in messages if message["headers"]["operation"] != "DELETE"]

    def first_ts(images: list[dict[str, Any]]) -> int:
        stamps = [datetime.fromisoformat(image["headers"]["timestamp"]).replace(tzinfo=UTC) for image in images]
        return int(min(stamps).timestamp() * 1000)

    with_department = [image for image in row_images if image["data"].get("DEPARTMENT") is not None]
    drift = demo_build.rows(
        "select column_name, value_type, drift, unix_millis(first_seen_ts) as first_seen_ms"
        " from `{schema}`.cdc_schema_drift where source_table = 'HR.EMPLOYEES'"
    )
    assert {(row["column_name"], row["value_type"], row["drift"]) for row in drift} == {
        ("EMPLOYEE_ID", "integer", "initial"),
        ("FIRST_NAME", "string", "initial"),
        ("LAST_NAME", "string", "initial"),
        ("SALARY", "string", "initial"),
        ("HIRE_DATE", "string", "initial"),
        ("DEPARTMENT", "string", "column_added"),
    }
    department = next(row for row in drift if row["column_name"] == "DEPARTMENT")
    assert department["first_seen_ms"] == first_ts(with_department)
    # The PostgreSQL tables had no schema change.
    assert (
        demo_build.rows(
            "select * from `{schema}`.cdc_schema_drift where source_table like 'inventory.%' and drift != 'initial'"
        )
        == []
    )


def test_topic_health_measures_each_topics_delays(demo_build: Build) -> None:
    topic = "dbserver1.inventory.customers"
    delays = []
    for path in (DEMO_LANDING / topic).glob("*.json"):
        for line in path.open():
            record = json.loads(line)
            if record["payload"] is not None:
                envelope = json.loads(record["payload"])["payload"]
                delays.append((envelope["ts_ms"] - envelope["source"]["ts_ms"], record["ts"] - envelope["ts_ms"]))
    health = demo_build.rows(
        "select changes, quarantined, source_to_connector_max_ms, connector_to_kafka_max_ms"
        f" from `{{schema}}`.cdc_topic_health where topic = '{topic}'"
    )
    assert health == [
        {
            "changes": len(delays),
            "quarantined": 0,
            "source_to_connector_max_ms": max(source for source, _ in delays),
            "connector_to_kafka_max_ms": max(kafka for _, kafka in delays),
        }
    ]


def test_source_freshness_measures_the_newest_landed_record_against_the_vars(
    demo_build: Build, dbt_project: DbtProject
) -> None:
    newest_ms = max(
        json.loads(line)["ts"] for path in DEMO_LANDING.rglob("*.json") for line in path.read_text().splitlines()
    )
    thresholds = {"landing_warn_after_hours": 1, "landing_error_after_hours": 10**6}
    freshness = dbt_project.source_freshness(DEMO_LANDING, demo_build.schema, thresholds)["landed_record_times"]
    assert freshness["status"] == "warn"
    newest = datetime.fromisoformat(freshness["max_loaded_at"])
    assert newest == datetime.fromtimestamp(newest_ms / 1000, UTC)
    # By default an error after 72 hours: the demo's records were written in 2024.
    assert dbt_project.source_freshness(DEMO_LANDING, demo_build.schema, {})["landed_record_times"]["status"] == "error"
