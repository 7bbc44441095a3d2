"""`cdc-dbt scaffold`: the Spark type of each column by the best information landed (Debezium
schema, Qlik metadata, JSON values seen), key columns, safe names, the files it writes and the
ones it refuses to overwrite. Pure Python: the scaffold reads the landed files itself, and the
command-line cases run with no Java reachable, so an answer that needed Spark would fail.
"""

import base64
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_dbt.column_types import (
    Seen,
    debezium_type,
    decimal_type,
    merge_seen,
    qlik_type,
    seen_type,
    seen_value,
)
from cdc_dbt.scaffold.command import main
from cdc_dbt.scaffold.declaration import CURRENT_SQL, HISTORY_SQL
from cdc_dbt.scaffold.evidence import read_landing
from cdc_dbt.scaffold.landed_files import landed_files
from cdc_dbt.scaffold.names import column_names, safe_identifier, split_source_table
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings
from tests.corpus import corpus_file, corpus_lines
from tests.kcat import KafkaRecord, kcat_json, write_kcat_file
from tests.qlik_messages import ColumnSpec, qlik_data, qlik_metadata, qlik_metadata_message
from udfs.qlik import QlikColumn

DEMO_LANDING = PACKAGE_PROJECT_DIR / "demo" / "landing"


# --- Types from the Debezium schema -----------------------------------------------------------


def decimal_schema(scale: Any, precision: Any = None) -> dict[str, Any]:
    parameters = {"scale": scale} | ({"connect.decimal.precision": precision} if precision is not None else {})
    return {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": parameters}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "int8"}, "int"),
        ({"type": "int16"}, "int"),
        ({"type": "int32"}, "int"),
        ({"type": "int64"}, "bigint"),
        ({"type": "float"}, "float"),
        ({"type": "double"}, "double"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "string"}, "string"),
        # The row JSON keeps the converter's base64 text.
        ({"type": "bytes"}, "string"),
        (decimal_schema("2", "10"), "decimal(10,2)"),
        (decimal_schema(4, 8), "decimal(8,4)"),
        (decimal_schema("2"), "decimal(38,2)"),
        (decimal_schema("1", "65"), "string"),
        ({"type": "int32", "name": "io.debezium.time.Date"}, "date"),
        ({"type": "int32", "name": "org.apache.kafka.connect.data.Date"}, "date"),
        ({"type": "int64", "name": "io.debezium.time.Timestamp"}, "timestamp"),
        ({"type": "int64", "name": "io.debezium.time.MicroTimestamp"}, "timestamp"),
        ({"type": "int64", "name": "io.debezium.time.NanoTimestamp"}, "timestamp"),
        ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "timestamp"),
        ({"type": "int64", "name": "io.debezium.time.MicroTime"}, "string"),
        ({"type": "string", "name": "io.debezium.time.ZonedTime"}, "string"),
        ({"type": "struct", "name": "io.debezium.data.VariableScaleDecimal"}, "string"),
        ({"type": "string", "name": "io.debezium.data.Json"}, "string"),
        ({"type": "string", "name": "io.debezium.data.Uuid"}, "string"),
        ({"type": "string", "name": "io.debezium.data.Enum"}, "string"),
        ({"type": "array", "items": {"type": "int32"}}, "array<int>"),
        ({"type": "map", "keys": {"type": "string"}, "values": decimal_schema("1", "5")}, "map<string,decimal(5,1)>"),
        (
            {
                "type": "struct",
                "name": "io.debezium.data.geometry.Point",
                "fields": [
                    {"type": "double", "field": "x"},
                    {"type": "bytes", "field": "wkb"},
                    {"type": "int32", "field": "srid"},
                ],
            },
            "struct<x:double,wkb:string,srid:int>",
        ),
    ],
)
def test_debezium_schema_types(schema: dict[str, Any], expected: str) -> None:
    column_type = debezium_type(schema)
    assert column_type is not None
    assert column_type.data_type == expected


def test_debezium_types_say_where_they_came_from() -> None:
    assert debezium_type({"type": "int32"}) == debezium_type({"type": "int32", "field": "id"})
    assert debezium_type({"type": "int32"}).origin == "int32 in the Debezium schema"  # type: ignore[union-attr]
    decimal = debezium_type(decimal_schema("2", "10"))
    assert decimal is not None
    assert "precision 10 and scale 2" in decimal.origin


def test_a_schema_without_a_known_type_leaves_the_column_to_the_values() -> None:
    assert debezium_type({"type": "something-new"}) is None
    assert debezium_type({"field": "x"}) is None


@pytest.mark.parametrize(
    ("precision", "scale", "expected"),
    [(10, 2, "decimal(10,2)"), (None, 3, "decimal(38,3)"), (0, 0, "decimal(38,0)"), (38, 38, "decimal(38,38)"),
     (2, 5, "decimal(5,5)"), (39, 2, "string"), (10, -2, "string")],
)  # fmt: skip
def test_decimal_types(precision: int | None, scale: int, expected: str) -> None:
    assert decimal_type(precision, scale) == expected


# --- Types from the Qlik metadata message -----------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "length", "precision", "scale", "expected"),
    [
        ("INT1", 0, 0, 0, "int"),
        ("INT2", 0, 0, 0, "int"),
        ("INT4", 0, 10, 0, "int"),
        ("INT8", 0, 0, 0, "bigint"),
        ("UINT8", 0, 0, 0, "decimal(20,0)"),
        ("NUMERIC", 0, 10, 2, "decimal(10,2)"),
        ("NUMERIC", 0, 0, 0, "decimal(38,0)"),
        ("NUMERIC", 0, 50, 2, "string"),
        ("REAL4", 0, 0, 0, "float"),
        ("REAL8", 0, 0, 0, "double"),
        ("STRING", 40, 0, 0, "string"),
        ("WSTRING", 40, 0, 0, "string"),
        ("CLOB", 0, 0, 0, "string"),
        ("NCLOB", 0, 0, 0, "string"),
        ("BYTES", 16, 0, 0, "string"),
        ("BLOB", 0, 0, 0, "string"),
        ("DATE", 0, 0, 0, "date"),
        ("TIME", 0, 0, 0, "string"),
        ("DATETIME", 0, 0, 6, "timestamp"),
        ("BOOLEAN", 0, 0, 0, "boolean"),
    ],
)
def test_qlik_metadata_types(kind: str, length: int, precision: int, scale: int, expected: str) -> None:
    column_type = qlik_type(QlikColumn("C", 1, kind, length, precision, scale))
    assert column_type is not None
    assert column_type.data_type == expected
    assert column_type.origin.startswith(f"Qlik {kind}")


def test_qlik_types_say_precision_and_length() -> None:
    assert qlik_type(QlikColumn("SALARY", 4, "NUMERIC", 0, 10, 2)).origin == "Qlik NUMERIC(10,2)"  # type: ignore[union-attr]
    assert qlik_type(QlikColumn("NAME", 2, "STRING", 40, 0, 0)).origin == "Qlik STRING(40)"  # type: ignore[union-attr]
    assert qlik_type(QlikColumn("X", 3, "GEOMETRY", 0, 0, 0)) is None


# --- Types from the JSON values seen ----------------------------------------------------------


def seen(*values: Any, extended: bool = False) -> str:
    merged = Seen()
    for value in values:
        merged = merge_seen(merged, seen_value(value, extended=extended))
    return seen_type(merged).data_type


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ((1, 2, None), "bigint"),
        ((1, 2.5), "double"),
        (("a", None), "string"),
        ((True, False), "boolean"),
        ((1, "a"), "string"),
        ((True, 1), "string"),
        ((None, None), "string"),
        ((2**70,), "decimal(38,0)"),
        ((10**40,), "string"),
        (({"up": 1}, {"down": 2}), "struct<up:bigint,down:bigint>"),
        (({"up": 1}, {"up": "many"}), "struct<up:string>"),
        (({"a b": 1},), "struct<`a b`:bigint>"),
        (({},), "string"),
        (([1], []), "array<bigint>"),
        (([],), "array<string>"),
        ((["x", 1],), "array<string>"),
        (([{"k": 1.5}],), "array<struct<k:double>>"),
        # Without `extended` (not a MongoDB document) a wrapper is an object like any other.
        (({"$numberLong": "5"},), "struct<`$numberLong`:string>"),
    ],
)
def test_json_types_seen(values: tuple[Any, ...], expected: str) -> None:
    assert seen(*values) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (({"$numberLong": "5"}, 7), "bigint"),
        (({"$numberInt": "5"},), "int"),
        (({"$numberInt": "5"}, 7), "int"),
        (({"$numberInt": "5"}, 2**40), "bigint"),
        (({"$numberInt": "5"}, {"$numberLong": "5"}), "bigint"),
        (({"$numberDouble": "1.5"}, {"$numberDouble": "NaN"}, 3), "double"),
        (({"$numberDecimal": "3.140"}, {"$numberDecimal": "12"}), "decimal(38,3)"),
        (({"$numberDecimal": "NaN"},), "string"),
        (({"$date": 1739455297970}, {"$date": {"$numberLong": "1"}}), "timestamp"),
        (({"$oid": "67ab25755c0d5ac87eb8c632"},), "string"),
        (({"$timestamp": {"t": 1736997330, "i": 2}},), "struct<t:bigint,i:bigint>"),
        (({"$binary": "uE2/4v5MSVOiJZkOo3APKQ==", "$type": "4"},), "string"),
        (({"up": {"$numberInt": "1"}, "at": {"$date": 0}},), "struct<up:int,at:timestamp>"),
        (([{"$numberLong": "1"}],), "array<bigint>"),
    ],
)
def test_mongodb_extended_json_says_more_than_the_unwrapped_value(values: tuple[Any, ...], expected: str) -> None:
    assert seen(*values, extended=True) == expected


def test_json_types_say_what_was_seen() -> None:
    assert seen_type(seen_value(7)).origin == "integers seen in the rows"
    assert seen_type(merge_seen(seen_value(7), seen_value("x"))).origin == "mixed integers, strings seen in the rows"
    assert seen_type(Seen()).origin == "only nulls seen in the rows"


# --- Names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("id", "id"), ("EMPLOYEE_ID", "employee_id"), ("First Name", "first_name"), ("a.b", "a_b"),
     ("1st", "_st"), ("_id", "_id"), ("café", "caf_"), ("", "column"), ("x-y:z", "x_y_z")],
)  # fmt: skip
def test_safe_identifiers(text: str, expected: str) -> None:
    assert safe_identifier(text) == expected


def test_fields_sharing_a_name_or_a_fixed_column_get_suffixes() -> None:
    names = column_names(["a.b", "a_b", "A B", "version", "row_key", "id", "version_2"])
    assert names == {
        "a.b": "a_b",
        "a_b": "a_b_2",
        "A B": "a_b_3",
        "version": "version_2",
        "row_key": "row_key_2",
        "id": "id",
        "version_2": "version_2_2",
    }
    assert all(re.fullmatch(r"[a-z_][a-z0-9_]*", name) for name in names.values())


def test_source_table_parts() -> None:
    assert split_source_table("inventory.customers") == ("inventory", "customers")
    assert split_source_table("shop.system.profile") == ("shop", "system.profile")
    assert split_source_table("customers") == (None, "customers")


# --- Landed records for the cases below ---------------------------------------------------------


def row_schema(fields: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    return {
        "type": "struct",
        "optional": True,
        "name": name,
        "fields": [{**schema, "field": field} for field, schema in fields.items()],
    }


def debezium_message(
    after: dict[str, Any] | None,
    fields: dict[str, dict[str, Any]] | None,
    *,
    table: str = "public.payments",
    connector: str = "postgresql",
    db: str = "shop",
    op: str = "c",
    ts_ms: int = 1_700_000_000_000,
) -> str:
    """A Debezium envelope, with the converter's schema when `fields` are given."""
    schema_name, table_name = table.split(".", 1)
    source = {"connector": connector, "db": db, "schema": schema_name, "table": table_name, "ts_ms": ts_ms}
    payload = {"before": None, "after": after, "source": source, "op": op, "ts_ms": ts_ms}
    if fields is None:
        return json.dumps(payload, separators=(",", ":"))
    value = row_schema(fields, f"server.{table}.Value")
    schema = {
        "type": "struct",
        "name": f"server.{table}.Envelope",
        "fields": [
            {**value, "field": "before"},
            {**value, "field": "after"},
            {"type": "struct", "fields": [], "field": "source"},
            {"type": "string", "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
        ],
    }
    return json.dumps({"schema": schema, "payload": payload}, separators=(",", ":"))


def decimal_text(unscaled: int) -> str:
    """Kafka Connect's Decimal: base64 of the big-endian two's-complement unscaled integer."""
    return base64.b64encode(unscaled.to_bytes(8, "big", signed=True)).decode()


PAYMENT_FIELDS = {
    "id": {"type": "int64", "optional": False},
    "line": {"type": "int16", "optional": False},
    "amount": decimal_schema("2", "12"),
    "paid_on": {"type": "int32", "name": "io.debezium.time.Date"},
    "paid_at": {"type": "int64", "name": "io.debezium.time.MicroTimestamp"},
    "is_refund": {"type": "boolean"},
    "First Name": {"type": "string"},
    "version": {"type": "int32"},
}


def payment(payment_id: int, line: int, **options: Any) -> KafkaRecord:
    after = {
        "id": payment_id,
        "line": line,
        "amount": decimal_text(1250),
        "paid_on": 19_000,
        "paid_at": 1_700_000_000_000_000,
        "is_refund": False,
        "First Name": "Ann",
        "version": 3,
    }
    key = json.dumps({"id": payment_id, "line": line})
    return KafkaRecord("server.public.payments", 0, payment_id, key, debezium_message(after, PAYMENT_FIELDS, **options))


JOBS_V1: dict[str, ColumnSpec] = {"JOB_ID": ("STRING", 10, 0, 0, 1), "MIN_SALARY": ("NUMERIC", 0, 8, 2, 0)}
JOBS_V2: dict[str, ColumnSpec] = {**JOBS_V1, "TITLE": ("WSTRING", 35, 0, 0, 0), "OPENED": ("DATETIME", 0, 0, 6, 0)}


def mongodb_message(after: str | None, *, op: str = "c", updated: str | None = None) -> str:
    source = {"connector": "mongodb", "db": "shop", "collection": "reviews", "ts_ms": 1_700_000_000_000, "ord": 1}
    body: dict[str, Any] = {"before": None, "after": after, "source": source, "op": op, "ts_ms": 1_700_000_000_000}
    if updated is not None:
        body["updateDescription"] = {"updatedFields": updated, "removedFields": [], "truncatedArrays": []}
    return json.dumps(body)


def settings_for(tmp_path: Path, landing_dir: Path | None = None) -> Settings:
    return Settings(
        project_dir=tmp_path / "project",
        landing_dir=landing_dir or tmp_path / "landing",
        warehouse_dir=tmp_path / "warehouse",
        master_url=None,
    )


def scaffold_models(
    tmp_path: Path, source_table: str, *options: str, landing_dir: Path | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the scaffold in this process; the current and history models of the YAML it wrote."""
    settings = settings_for(tmp_path, landing_dir)
    assert main([source_table, *options], settings) == 0
    (written,) = settings.project_dir.glob("models/marts/**/_*__models.yml")
    current, history = yaml.safe_load(written.read_text())["models"]
    return current, history


def columns_of(model: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {column["name"]: column for column in model["columns"]}


def types_of(model: dict[str, Any]) -> dict[str, str]:
    return {name: column["data_type"] for name, column in columns_of(model).items()}


def column_rules(model: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{column: its rules} of the model's one `cdc_dbt.column_rules` test, which comes first."""
    (test,) = [test for test in model["data_tests"] if "cdc_dbt.column_rules" in test]
    assert model["data_tests"][0] is test
    rules: dict[str, dict[str, Any]] = test["cdc_dbt.column_rules"]["arguments"]["columns"]
    return rules


def grain(model: dict[str, Any]) -> list[str]:
    """The grain of the model's `cdc_dbt.column_rules` test: the model's one uniqueness check."""
    (test,) = [test for test in model["data_tests"] if "cdc_dbt.column_rules" in test]
    assert not [test for test in model["data_tests"] if "cdc_dbt.unique_combination_of_columns" in test]
    columns: list[str] = test["cdc_dbt.column_rules"]["arguments"]["grain"]
    return columns


# --- What it writes -----------------------------------------------------------------------------


def test_a_debezium_table_by_its_converter_schema(tmp_path: Path) -> None:
    write_kcat_file(tmp_path / "landing" / "payments" / "part-0.json", [payment(1, 1), payment(2, 1)])
    current, history = scaffold_models(tmp_path, "public.payments")

    assert current["name"] == "payments_current"
    assert history["name"] == "payments_history"
    meta = {"cdc_source_table": "public.payments", "cdc_connector": "postgresql"}
    assert current["config"] == history["config"] == {"meta": meta, "contract": {"enforced": True}}
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "id": "bigint",
        "line": "int",
        "amount": "decimal(12,2)",
        "paid_on": "date",
        "paid_at": "timestamp",
        "is_refund": "boolean",
        "first_name": "string",
        "version_2": "int",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }
    assert list(types_of(history)) == [
        "source_db", "row_key", "version", "id", "line", "amount", "paid_on", "paid_at", "is_refund",
        "first_name", "version_2", "valid_from", "valid_to", "is_current", "ended_by",
    ]  # fmt: skip
    assert types_of(history)["version"] == "int"
    assert types_of(history)["is_current"] == "boolean"
    fields = {name: column["meta"]["cdc_field"] for name, column in columns_of(current).items() if "meta" in column}
    assert fields["first_name"] == "First Name"
    assert fields["version_2"] == "version"
    assert columns_of(current)["amount"]["description"] == (
        "`amount` of public.payments (org.apache.kafka.connect.data.Decimal with precision 12 and scale 2"
        " in the Debezium schema)."
    )


def test_the_typed_mart_options_are_written_commented_out_and_read_once_uncommented(tmp_path: Path) -> None:
    write_kcat_file(tmp_path / "landing" / "payments" / "part-0.json", [payment(1, 1), payment(2, 1)])
    current, history = scaffold_models(tmp_path, "public.payments")
    assert "cdc_keep_deleted" not in current["config"]["meta"], "off until the user turns it on"
    (written,) = tmp_path.glob("project/models/marts/**/_*__models.yml")

    uncommented = re.sub(r"^(\s+)# (cdc_\w+: )", r"\1\2", written.read_text(), flags=re.MULTILINE)
    current, history = yaml.safe_load(uncommented)["models"]
    assert current["config"]["meta"]["cdc_keep_deleted"] is True
    assert history["config"]["meta"]["cdc_track_history_except_columns"] == ["updated_at"]
    assert "cdc_keep_deleted" not in history["config"]["meta"]


def test_key_columns_get_not_null_and_the_grain_test(tmp_path: Path) -> None:
    write_kcat_file(tmp_path / "landing" / "payments.json", [payment(1, 1), payment(1, 2)])
    current, history = scaffold_models(tmp_path, "public.payments")

    assert grain(current) == ["source_db", "id", "line"]
    assert grain(history) == ["source_db", "id", "line", "version"]
    for model in (current, history):
        assert all("data_tests" not in column for column in model["columns"])
        tested = {name for name, rules in column_rules(model).items() if rules.get("not_null") is True}
        assert {"id", "line", "row_key"} <= tested
        assert {"amount", "first_name", "source_db"}.isdisjoint(tested)
        assert "part of the row key" in columns_of(model)["id"]["description"]
    key = {"not_null": True}
    assert list(column_rules(current).items()) == [
        ("row_key", key), ("id", key), ("line", key), ("last_op", {"accepted_values": ["c", "r", "u"]}),
    ]  # fmt: skip
    assert list(column_rules(history).items()) == [
        ("row_key", key), ("version", key), ("id", key), ("line", key), ("is_current", key),
        ("ended_by", {"accepted_values": ["u", "d", "t"]}),
    ]  # fmt: skip


def test_a_debezium_table_without_a_schema_by_its_values(tmp_path: Path) -> None:
    records = [
        KafkaRecord("t", 0, 0, '{"id":1}', debezium_message({"id": 1, "note": "a", "score": 1}, None)),
        KafkaRecord("t", 0, 1, '{"id":2}', debezium_message({"id": 2, "note": None, "score": 2.5}, None)),
    ]
    write_kcat_file(tmp_path / "landing" / "t.jsonl", records)
    current, _ = scaffold_models(tmp_path, "public.payments")
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "id": "bigint",
        "note": "string",
        "score": "double",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }
    assert columns_of(current)["score"]["description"] == (
        "`score` of public.payments (integers, numbers with a fraction seen in the rows)."
    )


def test_the_newest_schema_decides_and_older_fields_follow(tmp_path: Path) -> None:
    old = {"id": {"type": "int32"}, "dropped": {"type": "string"}, "amount": {"type": "int32"}}
    new = {"id": {"type": "int32"}, "amount": {"type": "int64"}, "added": {"type": "boolean"}}
    records = [
        KafkaRecord("t", 0, 0, '{"id":1}', debezium_message({"id": 1, "dropped": "x", "amount": 1}, old, ts_ms=1000)),
        KafkaRecord("t", 0, 1, '{"id":1}', debezium_message({"id": 1, "amount": 2, "added": True}, new, ts_ms=2000)),
    ]
    write_kcat_file(tmp_path / "landing" / "t.json", list(reversed(records)))
    current, _ = scaffold_models(tmp_path, "public.payments")
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "id": "int",
        "amount": "bigint",
        "added": "boolean",
        "dropped": "string",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }


def test_a_field_the_schema_does_not_type_is_typed_by_its_values(tmp_path: Path) -> None:
    fields = {"id": {"type": "int32"}, "shape": {"type": "something-new"}}
    message = debezium_message({"id": 1, "shape": [1, 2]}, fields)
    write_kcat_file(tmp_path / "landing" / "t.json", [KafkaRecord("t", 0, 0, '{"id":1}', message)])
    current, _ = scaffold_models(tmp_path, "public.payments")
    assert types_of(current)["id"] == "int"
    assert types_of(current)["shape"] == "array<bigint>"
    assert columns_of(current)["shape"]["description"] == "`shape` of public.payments (arrays seen in the rows)."


def test_flattened_records_by_their_schema_without_the_transforms_fields(tmp_path: Path) -> None:
    schema = row_schema(
        {
            "id": {"type": "int32"},
            "total": decimal_schema("2", "9"),
            "__op": {"type": "string"},
            "__table": {"type": "string"},
            "__schema": {"type": "string"},
            "__deleted": {"type": "string"},
        },
        "server.public.payments.Value",
    )
    body = {"id": 1, "total": decimal_text(995), "__op": "c", "__schema": "public", "__table": "payments"}
    message = json.dumps({"schema": schema, "payload": body | {"__deleted": "false"}})
    write_kcat_file(tmp_path / "landing" / "t.json", [KafkaRecord("server.public.payments", 0, 0, '{"id":1}', message)])
    current, _ = scaffold_models(tmp_path, "public.payments")
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "id": "int",
        "total": "decimal(9,2)",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }
    # Without `__connector` the records name no connector: the declaration says so (null).
    assert current["config"]["meta"] == {"cdc_source_table": "public.payments", "cdc_connector": None}
    assert current["description"].startswith("Typed current state of public.payments: one row per live row")


def test_two_tables_differing_only_in_case_need_the_exact_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [payment(1, 1), payment(2, 1, table="PUBLIC.payments")]
    write_kcat_file(tmp_path / "landing" / "p.json", records)
    assert main(["Public.Payments"], settings_for(tmp_path)) == 2
    assert "matches PUBLIC.payments, public.payments" in capsys.readouterr().err
    current, _ = scaffold_models(tmp_path, "PUBLIC.payments")
    assert current["config"]["meta"]["cdc_source_table"] == "PUBLIC.payments"


def test_a_qlik_table_by_its_newest_metadata_with_the_primary_key(tmp_path: Path) -> None:
    records = [
        KafkaRecord(
            "qlik.HR.JOBS", 0, 0, '{"JOB_ID":"A"}', qlik_data("S1", "INSERT", {"JOB_ID": "A", "MIN_SALARY": "1.00"})
        ),
        KafkaRecord(
            "qlik.HR.JOBS", 0, 1, '{"JOB_ID":"B"}', qlik_data("S2", "INSERT", {"JOB_ID": "B", "MIN_SALARY": "2.00"})
        ),
        KafkaRecord("qlik.metadata", 0, 0, None, qlik_metadata("S2", "HR", "JOBS", JOBS_V2, table_version=2)),
        KafkaRecord("qlik.metadata", 0, 1, None, qlik_metadata("S1", "HR", "JOBS", JOBS_V1)),
    ]
    write_kcat_file(tmp_path / "landing" / "qlik.json", records)
    current, history = scaffold_models(tmp_path, "HR.JOBS")

    assert current["config"]["meta"] == {"cdc_source_table": "HR.JOBS", "cdc_connector": "qlik"}
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "job_id": "string",
        "min_salary": "decimal(8,2)",
        "title": "string",
        "opened": "timestamp",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }
    assert grain(history) == ["source_db", "job_id", "version"]
    assert columns_of(current)["min_salary"]["description"] == "`MIN_SALARY` of HR.JOBS (Qlik NUMERIC(8,2))."
    assert columns_of(current)["job_id"]["meta"] == {"cdc_field": "JOB_ID"}
    assert "Qlik" in columns_of(current)["source_db"]["description"]


def test_a_bare_qlik_data_message_binds_to_its_topics_metadata(tmp_path: Path) -> None:
    bare_metadata = json.dumps(qlik_metadata_message("S1", "HR", "JOBS", JOBS_V1))
    records = [
        KafkaRecord("jobs", 0, 0, None, qlik_data(None, "INSERT", {"JOB_ID": "A", "MIN_SALARY": "1.00"})),
        KafkaRecord("jobs", 0, 1, None, bare_metadata),
    ]
    write_kcat_file(tmp_path / "landing" / "jobs.json", records)
    reader = read_landing(tmp_path / "landing", "HR.JOBS")
    assert reader.tables == {("HR.JOBS", "qlik"): 1}
    assert list(reader.evidence[("HR.JOBS", "qlik")].key_fields) == ["JOB_ID"]


def test_bare_qlik_data_messages_bind_by_their_columns_after_a_ddl_change(tmp_path: Path) -> None:
    """The build's rule (int_qlik_records_bound, udfs.qlik_binding): two table versions in one
    topic, each bare data message bound to the version whose columns it has."""
    version_2 = qlik_metadata_message("S2", "HR", "JOBS", JOBS_V2, table_version=2)
    records = [
        KafkaRecord("jobs", 0, 0, None, json.dumps(qlik_metadata_message("S1", "HR", "JOBS", JOBS_V1))),
        KafkaRecord("jobs", 0, 1, None, qlik_data(None, "INSERT", {"JOB_ID": "A", "MIN_SALARY": "1.00"})),
        KafkaRecord("jobs", 0, 2, None, json.dumps(version_2)),
        KafkaRecord(
            "jobs", 0, 3, None,
            qlik_data(None, "INSERT", {"JOB_ID": "B", "MIN_SALARY": "2.00", "TITLE": "Cook", "OPENED": None}),
        ),
    ]  # fmt: skip
    write_kcat_file(tmp_path / "landing" / "jobs.json", records)
    reader = read_landing(tmp_path / "landing", "HR.JOBS")
    assert reader.tables == {("HR.JOBS", "qlik"): 2}
    assert reader.evidence[("HR.JOBS", "qlik")].seen.keys() == {"JOB_ID", "MIN_SALARY", "TITLE", "OPENED"}


def test_a_mongodb_collection_by_its_extended_json(tmp_path: Path) -> None:
    document = (
        '{"_id": {"$oid": "65e500000000000000000001"}, "product_id": {"$numberLong": "101"}, "rating": 1,'
        ' "posted": {"$date": 1709539201000}, "tags": ["loud"], "votes": {"up": 4, "down": 0}}'
    )
    key = '{"id":"{\\"$oid\\": \\"65e500000000000000000001\\"}"}'
    update = '{"rating": {"$numberInt": "2"}, "votes.up": 5, "seen": true}'
    records = [
        KafkaRecord("mongo1.shop.reviews", 0, 0, key, mongodb_message(document)),
        KafkaRecord("mongo1.shop.reviews", 0, 1, key, mongodb_message(None, op="u", updated=update)),
    ]
    write_kcat_file(tmp_path / "landing" / "reviews.json", records)
    current, _ = scaffold_models(tmp_path, "shop.reviews")

    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "_id": "string",
        "product_id": "bigint",
        "rating": "int",
        "posted": "timestamp",
        "tags": "array<string>",
        "votes": "struct<up:bigint,down:bigint>",
        "seen": "boolean",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }
    assert grain(current) == ["source_db", "_id"]
    assert (
        columns_of(current)["product_id"]["description"]
        == "`product_id` of shop.reviews ($numberLong seen in the rows)."
    )


def test_gzip_and_parquet_files_are_read_like_the_build_reads_them(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    landing = tmp_path / "landing"
    landing.mkdir()
    with gzip.open(landing / "a.json.gz", "wt") as file:
        file.write(kcat_json(payment(1, 1)) + "\n")
    record = payment(2, 1)
    table = pa.table(
        {
            "key": [record.key.encode() if record.key else None],
            "value": [record.payload.encode() if record.payload else None],
            "topic": [record.topic],
            "partition": pa.array([0], pa.int32()),
            "offset": pa.array([2], pa.int64()),
        }
    )
    pq.write_table(table, landing / "b.parquet")
    (landing / "_SUCCESS").write_text("")
    (landing / "c.json.crc").write_text("not a record")
    (landing / ".hidden").mkdir()
    write_kcat_file(landing / ".hidden" / "d.json", [payment(3, 1)])
    (landing / "notes.md").write_text("not landed data")

    assert [path.name for path in landed_files(landing)] == ["a.json.gz", "b.parquet"]
    reader = read_landing(landing, "public.payments")
    assert reader.tables == {("public.payments", "postgresql"): 2}


def test_an_avro_topic_is_typed_as_its_json_twin(
    tmp_path: Path, schema_registry_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parquet keys and values in a Schema Registry's wire format are read as the build reads them,
    as their JsonConverter text: the same types as the JSON twin's, from the same Connect schema."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from tests.avro_messages import AvroProducer
    from tests.converter_messages import TOPIC, change_event, key_of, row

    monkeypatch.setenv("CDC_SCHEMA_REGISTRY_URL", schema_registry_server.url)
    producer = AvroProducer(schema_registry_server.url)
    messages = [(key_of(1), change_event("c", None, row(1))), (key_of(2), change_event("r", None, row(2)))]
    forms = {
        "json": [(json.dumps(key).encode(), json.dumps(value).encode()) for key, value in messages],
        "avro": [
            (producer.message(TOPIC, key, is_key=True), producer.message(TOPIC, value)) for key, value in messages
        ],
    }
    types = {}
    for form, records in forms.items():
        landing = tmp_path / form / "landing"
        landing.mkdir(parents=True)
        table = pa.table(
            {
                "key": [key for key, _ in records],
                "value": [value for _, value in records],
                "topic": [TOPIC] * len(records),
                "partition": pa.array([0] * len(records), pa.int32()),
                "offset": pa.array(range(len(records)), pa.int64()),
            }
        )
        pq.write_table(table, landing / "part-0.parquet")
        current, _ = scaffold_models(tmp_path / form, "public.items", landing_dir=landing)
        types[form] = types_of(current)
    assert types["avro"] == types["json"]
    assert types["avro"]["price"] == "decimal(10,2)"


# --- Choosing the table ---------------------------------------------------------------------------


def test_an_unknown_table_lists_the_landed_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    assert main(["public.nothing"], settings_for(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "'public.nothing'" in err
    assert "landed: public.payments (postgresql)" in err
    assert not (tmp_path / "project").exists()


def test_a_table_name_matches_regardless_of_case_and_keeps_the_sources_spelling(tmp_path: Path) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    current, _ = scaffold_models(tmp_path, "PUBLIC.Payments")
    assert current["config"]["meta"]["cdc_source_table"] == "public.payments"


def test_a_table_written_by_two_connectors_needs_one_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = '{"_id": 7, "body": "x"}'
    mongo = json.loads(mongodb_message(document))
    mongo["source"] |= {"db": "public", "collection": "payments"}
    records = [payment(1, 1), KafkaRecord("mongo.public.payments", 0, 0, '{"id":"7"}', json.dumps(mongo))]
    write_kcat_file(tmp_path / "landing" / "both.json", records)
    settings = settings_for(tmp_path)

    assert main(["public.payments"], settings) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "(mongodb, postgresql)" in err
    assert "--connector" in err

    assert main(["public.payments", "--connector", "db2"], settings) == 2
    assert "mongodb, postgresql" in capsys.readouterr().err

    current, _ = scaffold_models(tmp_path, "public.payments", "--connector", "mongodb")
    assert current["config"]["meta"]["cdc_connector"] == "mongodb"
    assert types_of(current)["body"] == "string"


def test_a_missing_landing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["public.payments"], settings_for(tmp_path)) == 2
    assert capsys.readouterr().err == (
        f"cdc-dbt scaffold: the landing folder {tmp_path / 'landing'} does not exist (CDC_LANDING_DIR)\n"
    )


# --- Files: written once, never overwritten without --force ---------------------------------------


def test_it_writes_three_files_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    assert main(["public.payments", "--folder", "finance", "--name", "payment_lines"], settings_for(tmp_path)) == 0
    folder = tmp_path / "project" / "models" / "marts" / "finance"
    assert sorted(path.name for path in folder.iterdir()) == [
        "_payment_lines__models.yml",
        "payment_lines_current.sql",
        "payment_lines_history.sql",
    ]
    assert (folder / "payment_lines_current.sql").read_text() == "{{ cdc_dbt.cdc_typed_current() }}\n" == CURRENT_SQL
    assert (folder / "payment_lines_history.sql").read_text() == "{{ cdc_dbt.cdc_typed_history() }}\n" == HISTORY_SQL
    lines = capsys.readouterr().out.splitlines()
    assert [Path(line).name for line in lines[:3]] == [
        "payment_lines_current.sql",
        "payment_lines_history.sql",
        "_payment_lines__models.yml",
    ]
    assert "cdc-dbt build" in lines[3]
    assert len(lines) == 4
    text = (folder / "_payment_lines__models.yml").read_text()
    assert "cdc-dbt scaffold public.payments --folder finance --name payment_lines" in text


def test_it_never_overwrites_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    settings = settings_for(tmp_path)
    folder = tmp_path / "project" / "models" / "marts" / "public"
    folder.mkdir(parents=True)
    (folder / "_payments__models.yml").write_text("# mine\n")

    assert main(["public.payments"], settings) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "_payments__models.yml exists" in err
    assert "--force" in err
    assert sorted(path.name for path in folder.iterdir()) == ["_payments__models.yml"]
    assert (folder / "_payments__models.yml").read_text() == "# mine\n"

    assert main(["public.payments", "--force"], settings) == 0
    assert (folder / "_payments__models.yml").read_text() != "# mine\n"
    assert len(list(folder.iterdir())) == 3


def test_a_model_of_the_same_name_elsewhere_stops_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    other = tmp_path / "project" / "models" / "marts" / "examples" / "payments_history.sql"
    other.parent.mkdir(parents=True)
    other.write_text("select 1 as id\n")
    assert main(["public.payments"], settings_for(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "payments_history" in err and "--name" in err
    assert not (tmp_path / "project" / "models" / "marts" / "public").exists()


def rendered(value: str) -> str:
    """A YAML value as dbt reads it: rendered with Jinja."""
    jinja2 = pytest.importorskip("jinja2")
    text: str = jinja2.Environment().from_string(value).render()
    return text


def test_identifiers_from_data_never_break_the_yaml(tmp_path: Path) -> None:
    awkward = [
        "{{ jinja }}",
        "{% if x %}",
        "{# note",
        "key: value",
        "# not a comment",
        'it\'s "quoted"',
        "multi\nline",
        "- dash",
        "{braces}",
        "日本語",
        "&anchor *alias !tag",
        "@at `tick`",
        "%percent",
    ]
    fields = {"id": {"type": "int32"}} | {name: {"type": "string"} for name in awkward}
    after = {"id": 1} | dict.fromkeys(awkward, "x")
    table = "odd.ta:ble\n# x"
    message = debezium_message(after, fields, table=table)
    write_kcat_file(tmp_path / "landing" / "odd.json", [KafkaRecord("odd", 0, 0, '{"id":1}', message)])
    current, history = scaffold_models(tmp_path, table)

    assert rendered(current["config"]["meta"]["cdc_source_table"]) == table
    row_columns = [column for column in current["columns"] if "meta" in column]
    assert [rendered(column["meta"]["cdc_field"]) for column in row_columns] == ["id", *awkward]
    assert (
        rendered(row_columns[1]["description"]) == "`{{ jinja }}` of odd.ta:ble\\n# x (string in the Debezium schema)."
    )
    assert "\n" not in "".join(column["description"] for column in current["columns"])
    names = [column["name"] for column in current["columns"]]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z_][a-z0-9_]*", name) for name in names)
    assert history["name"] == "ta_ble___x_history"


# --- The command, as a user runs it, on the bundled demo ------------------------------------------


def cdc_dbt(cwd: Path, *args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """`cdc-dbt` in its own process, with no Java reachable, this checkout's code first."""
    without_java = {name: value for name, value in os.environ.items() if name not in ("JAVA_HOME", "CDC_SCHEMA")}
    without_java |= {"PATH": "/nonexistent", "PYTHONPATH": str(PACKAGE_PROJECT_DIR)}
    return subprocess.run(
        [sys.executable, "-m", "cdc_dbt.cli", *args],
        cwd=cwd,
        env={**without_java, **environment},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    """A dbt project folder of a user's: where `cdc-dbt` run from it writes."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text((PACKAGE_PROJECT_DIR / "dbt_project.yml").read_text())
    return project


def example_mart_types(yml_name: str, model: str, columns_macro: str) -> dict[str, str]:
    """{row JSON field: data_type} of one of the demo's hand-written example marts: from its YAML's
    `meta.cdc_field`, or, in the older form, from its columns macro (`source` → `name`)."""
    (yml,) = PACKAGE_PROJECT_DIR.glob(f"models/marts/**/{yml_name}")
    declared = next(m for m in yaml.safe_load(yml.read_text())["models"] if m["name"] == model)["columns"]
    types = {column["name"]: column["data_type"].replace(" ", "") for column in declared}
    by_field = {c["meta"]["cdc_field"]: types[c["name"]] for c in declared if "cdc_field" in c.get("meta", {})}
    if by_field:
        return by_field
    macros = "".join(path.read_text() for path in PACKAGE_PROJECT_DIR.glob("macros/**/*.sql"))
    body = macros.split(f"macro {columns_macro}()", 1)[1].split("endmacro", 1)[0]
    return {source: types[name] for source, name in re.findall(r"'source': '([^']+)', 'name': '([^']+)'", body)}


def test_the_demos_customers_as_a_user_scaffolds_them(user_project: Path) -> None:
    run = cdc_dbt(user_project, "scaffold", "inventory.customers", CDC_LANDING_DIR=str(DEMO_LANDING))
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    folder = Path("models/marts/inventory")
    assert run.stdout.splitlines() == [
        str(folder / "customers_current.sql"),
        str(folder / "customers_history.sql"),
        str(folder / "_customers__models.yml"),
        f"Review the types in {folder / '_customers__models.yml'}, then run `cdc-dbt build`.",
    ]
    assert (user_project / folder / "customers_current.sql").read_text() == "{{ cdc_dbt.cdc_typed_current() }}\n"
    assert (user_project / folder / "customers_history.sql").read_text() == "{{ cdc_dbt.cdc_typed_history() }}\n"
    current, history = yaml.safe_load((user_project / folder / "_customers__models.yml").read_text())["models"]

    # Where the demo's example mart knows a type, the scaffold finds the same one.
    expected = example_mart_types("_customers__models.yml", "customers_current", "inventory_customers_columns")
    for model in (current, history):
        found = {c["meta"]["cdc_field"]: c["data_type"] for c in model["columns"] if "meta" in c}
        assert (
            found
            == expected
            == {
                "id": "int",
                "first_name": "string",
                "last_name": "string",
                "email": "string",
                "updated_at": "timestamp",
            }
        )
    assert grain(current) == ["source_db", "id"]
    assert grain(history) == ["source_db", "id", "version"]
    assert [c["name"] for c in current["columns"]][:2] == ["source_db", "row_key"]
    assert [c["name"] for c in current["columns"]][-2:] == ["last_op", "last_changed_ts"]
    assert [c["name"] for c in history["columns"]][-4:] == ["valid_from", "valid_to", "is_current", "ended_by"]

    again = cdc_dbt(user_project, "scaffold", "inventory.customers", CDC_LANDING_DIR=str(DEMO_LANDING))
    assert again.returncode == 2
    assert again.stderr.count("\n") == 1
    assert "customers_current.sql exists" in again.stderr


def test_the_scaffold_usage_is_in_the_help(user_project: Path) -> None:
    assert "cdc-dbt scaffold <source_table> [--connector C]" in cdc_dbt(user_project, "--help").stdout
    run = cdc_dbt(user_project, "scaffold", "no.such_table", CDC_LANDING_DIR=str(DEMO_LANDING))
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert "HR.EMPLOYEES (qlik), inventory.customers (postgresql)" in run.stderr
    assert "shop.reviews (mongodb)" in run.stderr


def test_the_demos_qlik_employees(tmp_path: Path) -> None:
    current, _ = scaffold_models(tmp_path, "HR.EMPLOYEES", landing_dir=DEMO_LANDING)
    found = {c["meta"]["cdc_field"]: c["data_type"] for c in current["columns"] if "meta" in c}
    assert found == example_mart_types("_employees__models.yml", "employees_current", "hr_employees_columns")
    assert grain(current) == ["source_db", "employee_id"]


def test_the_demos_mongodb_reviews(tmp_path: Path) -> None:
    current, _ = scaffold_models(tmp_path, "shop.reviews", landing_dir=DEMO_LANDING)
    found = {c["meta"]["cdc_field"]: c["data_type"] for c in current["columns"] if "meta" in c}
    expected = example_mart_types("_reviews__models.yml", "reviews_current", "shop_reviews_columns")
    # Where the landed data says the type (an ObjectId, a $numberLong, the $numberInt of updates).
    assert {name: found[name] for name in ("_id", "product_id", "rating", "text", "tags")} == {
        name: expected[name] for name in ("_id", "product_id", "rating", "text", "tags")
    }
    # `votes.up` and `votes.down` are plain integers: nothing says they are 32-bit.
    assert (found["votes"], expected["votes"]) == ("struct<up:bigint,down:bigint>", "struct<up:int,down:int>")
    assert grain(current) == ["source_db", "_id"]


# --- Real connector messages --------------------------------------------------------------------


def test_corpus_debezium_postgresql_schema(tmp_path: Path) -> None:
    create = json.loads(corpus_lines("debezium-docs", "postgresql-examples.jsonl")[0])
    write_kcat_file(tmp_path / "landing" / "pg.json", [KafkaRecord("pg", 0, 0, '{"id":1}', json.dumps(create))])
    current, _ = scaffold_models(tmp_path, "public.customers")
    assert current["config"]["meta"]["cdc_connector"] == "postgresql"
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "id": "int",
        "first_name": "string",
        "last_name": "string",
        "email": "string",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }


def test_corpus_flink_mysql_products(tmp_path: Path) -> None:
    lines = [line for line in corpus_lines("flink-json", "debezium-data-schema-include.txt") if line.startswith("{")]
    records = [KafkaRecord("mysql", 0, offset, '{"id":1}', line) for offset, line in enumerate(lines)]
    write_kcat_file(tmp_path / "landing" / "mysql.json", records)
    current, _ = scaffold_models(tmp_path, "inventory.products", "--connector", "mysql")
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "id": "int",
        "name": "string",
        "description": "string",
        "weight": "double",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }


def test_corpus_qlik_metadata_and_data(tmp_path: Path) -> None:
    folder = "qlik", "jcustenborder-attunity-json-converter"
    metadata = json.dumps(json.loads(corpus_file(*folder, "Metadata.json").read_text()))
    data = json.dumps(json.loads(corpus_file(*folder, "Data.json").read_text()))
    records = [KafkaRecord("salaries", 0, 0, None, data), KafkaRecord("metadata", 0, 0, None, metadata)]
    write_kcat_file(tmp_path / "landing" / "qlik.json", records)
    current, _ = scaffold_models(tmp_path, "employees.salaries")
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "emp_no": "int",
        "salary": "int",
        "from_date": "date",
        "to_date": "date",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }
    assert grain(current) == ["source_db", "emp_no", "from_date"]


def test_corpus_paimon_mongodb(tmp_path: Path) -> None:
    lines = [line for line in corpus_lines("paimon-debezium-mongodb", "event-insert.txt") if line.startswith("{")]
    keys, values = lines[0::2], lines[1::2]
    records = [
        KafkaRecord("m", 0, offset, key, value) for offset, (key, value) in enumerate(zip(keys, values, strict=True))
    ]
    write_kcat_file(tmp_path / "landing" / "m.json", records)
    current, _ = scaffold_models(tmp_path, "bigdata_test.sync_test_table")
    assert types_of(current) == {
        "source_db": "string",
        "row_key": "string",
        "_id": "string",
        "created_at": "bigint",
        "created_by": "string",
        "tags": "array<string>",
        "updated_at": "timestamp",
        "last_op": "string",
        "last_changed_ts": "timestamp",
    }


def test_the_current_mart_warns_of_a_declared_field_that_never_landed(tmp_path: Path) -> None:
    current, history = scaffold_models(tmp_path, "inventory.customers", landing_dir=DEMO_LANDING)
    assert {"cdc_dbt.typed_mart_fields_landed": {"config": {"severity": "warn"}}} in current["data_tests"]
    assert all("cdc_dbt.typed_mart_fields_landed" not in test for test in history["data_tests"])
