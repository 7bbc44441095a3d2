"""`cdc-dbt scaffold --check` and `--update`: a typed mart scaffolded from what had landed, then
landed records of a changed source table (a Debezium PostgreSQL table gaining a column and widening
its types, a Qlik table version with a new column and a wider type), compared and updated; the
widening rules alone. Pure Python, like the scaffold: no Spark, no Java.
"""

import difflib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_dbt.column_types import Seen, merge_seen, parse_type, seen_value, widen, widen_for_seen
from cdc_dbt.scaffold.command import main
from cdc_dbt.scaffold.yaml_edit import ModelEdit, YamlEditError, edit_models_yaml
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings
from tests.kcat import KafkaRecord, write_kcat_file
from tests.qlik_messages import ColumnSpec, qlik_data, qlik_metadata
from tests.unit.test_scaffold import (
    DEMO_LANDING,
    PAYMENT_FIELDS,
    debezium_message,
    decimal_schema,
    decimal_text,
    payment,
    scaffold_models,
    settings_for,
    types_of,
)

# --- The widening rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "landed", "expected"),
    [
        # Integers: tinyint < smallint < int < bigint.
        ("int", "bigint", "bigint"),
        ("smallint", "int", "int"),
        ("tinyint", "bigint", "bigint"),
        # Decimals: the integer digits of either, the scale of either.
        ("decimal(12,2)", "decimal(14,2)", "decimal(14,2)"),
        ("decimal(12,2)", "decimal(12,4)", "decimal(14,4)"),
        ("decimal(8,2)", "decimal(10,0)", "decimal(12,2)"),
        ("decimal", "decimal(12,0)", "decimal(12,0)"),
        # An integer type and a decimal: the integer's digits (10 for int, 19 for bigint).
        ("int", "decimal(12,2)", "decimal(12,2)"),
        ("decimal(5,2)", "int", "decimal(12,2)"),
        ("bigint", "decimal(20,0)", "decimal(20,0)"),
        # Floating point: float < double; what fits a double exactly.
        ("float", "double", "double"),
        ("int", "double", "double"),
        ("float", "int", "double"),
        # A date is a timestamp's midnight.
        ("date", "timestamp", "timestamp"),
        ("date", "timestamp_ntz", "timestamp_ntz"),
        # Nested types, member by member; a member that landed is added.
        ("array<int>", "array<bigint>", "array<bigint>"),
        ("map<string,decimal(5,1)>", "map<string,decimal(6,3)>", "map<string,decimal(7,3)>"),
        ("struct<a:int,`b c`:string>", "struct<a:bigint,d:date>", "struct<a:bigint,`b c`:string,d:date>"),
        # Spelled as Spark lets a user spell it.
        ("INTEGER", "LONG", "bigint"),
    ],
)
def test_a_clean_widening_holds_both(declared: str, landed: str, expected: str) -> None:
    widening = widen(declared, landed)
    assert widening.clean
    assert widening.data_type == expected
    # Both ways round, the same type (a struct's members in another order); and it holds each
    # without a further change.
    if not expected.startswith("struct"):
        assert parse_type(widen(landed, declared).data_type) == parse_type(expected)
    assert widen(expected, landed).data_type == expected
    assert widen(expected, declared).data_type == expected


@pytest.mark.parametrize(
    ("declared", "landed"),
    [
        ("bigint", "int"),
        ("decimal(14,2)", "decimal(12,2)"),
        ("double", "float"),
        ("timestamp", "date"),
        ("decimal(38,0)", "bigint"),
        ("array<bigint>", "array<int>"),
        ("struct<a:bigint,b:string>", "struct<a:int>"),
        # string holds every value (the row JSON's text of it).
        ("string", "int"),
        ("string", "struct<a:int>"),
        # A type not known here is the user's.
        ("varchar(10)", "string"),
    ],
)
def test_a_wider_declared_type_is_never_narrowed(declared: str, landed: str) -> None:
    assert widen(declared, landed).data_type == declared
    assert widen(declared, landed).clean


@pytest.mark.parametrize(
    ("declared", "landed", "why"),
    [
        ("int", "string", "int cannot hold string: not a widening"),
        ("boolean", "int", "boolean cannot hold int: not a widening"),
        # A double holds 53 bits of an integer, not 64; a decimal's digits, not exactly.
        ("bigint", "double", "bigint cannot hold double: not a widening"),
        ("decimal(10,2)", "double", "decimal(10,2) cannot hold double: not a widening"),
        ("date", "int", "date cannot hold int: not a widening"),
        # Beyond Spark's 38 digits.
        ("decimal(38,10)", "decimal(38,0)", "need decimal(48,10), beyond Spark's 38 digits"),
        ("bigint", "decimal(38,20)", "need decimal(39,20), beyond Spark's 38 digits"),
        ("struct<a:int>", "struct<a:string>", "member a: int cannot hold string"),
    ],
)
def test_anything_else_is_said_and_the_type_kept_unless_string_is_asked_for(
    declared: str, landed: str, why: str
) -> None:
    widening = widen(declared, landed)
    assert not widening.clean
    assert widening.data_type == declared
    assert why in str(widening.why)
    assert widen(declared, landed, to_string=True) == widen("string", landed)


def seen(*values: Any) -> Seen:
    merged = Seen()
    for value in values:
        merged = merge_seen(merged, seen_value(value))
    return merged


@pytest.mark.parametrize(
    ("declared", "values", "expected"),
    [
        # JSON integers: what they need, not the bigint the scaffold would write for them.
        ("int", (1, 2**31 - 1), "int"),
        ("int", (1, 2**31), "bigint"),
        ("decimal(5,2)", (999,), "decimal(5,2)"),
        ("decimal(5,2)", (12345,), "decimal(7,2)"),
        ("bigint", (2**64,), "decimal(38,0)"),
        ("int", (1.5,), "double"),
        # What the values cannot tell keeps the declared type: text (a timestamp chosen on
        # review), numbers with a fraction in a decimal (their digits are not kept).
        ("timestamp", ("2024-03-04T08:00:00Z",), "timestamp"),
        ("decimal(10,2)", (1.25,), "decimal(10,2)"),
        ("struct<up:int,down:int>", ({"up": 4, "down": 0},), "struct<up:int,down:int>"),
        ("struct<up:int>", ({"up": 2**40, "new": True},), "struct<up:bigint,new:boolean>"),
        ("array<int>", ([1, 2**40],), "array<bigint>"),
    ],
)
def test_values_seen_are_held_by_what_they_need(declared: str, values: tuple[Any, ...], expected: str) -> None:
    assert widen_for_seen(declared, seen(*values)).data_type == expected


def test_mixed_values_are_not_a_widening() -> None:
    widening = widen_for_seen("bigint", seen(1, "one"))
    assert (widening.data_type, widening.clean) == ("bigint", False)


# --- A Debezium PostgreSQL table gains a column and widens two types ------------------------------

CHANGED_PAYMENT_FIELDS = {
    **PAYMENT_FIELDS,
    "amount": decimal_schema("2", "14"),  # ALTER COLUMN amount TYPE numeric(14,2)
    "version": {"type": "int64"},  # ALTER COLUMN version TYPE bigint
    "note": {"type": "string", "optional": True},  # ADD COLUMN note text
}


def changed_payment(payment_id: int) -> KafkaRecord:
    after = {
        "id": payment_id,
        "line": 1,
        "amount": decimal_text(123_456_789_012),
        "paid_on": 19_000,
        "paid_at": 1_700_000_000_000_000,
        "is_refund": False,
        "First Name": "Bo",
        "version": 2**40,
        "note": "split",
    }
    message = debezium_message(after, CHANGED_PAYMENT_FIELDS, ts_ms=1_800_000_000_000)
    return KafkaRecord(
        "server.public.payments", 0, 100 + payment_id, json.dumps({"id": payment_id, "line": 1}), message
    )


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """The command in this process: exit status, stdout lines, stderr."""
    capsys.readouterr()
    status = main(list(argv), settings_for(tmp_path))
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def models_yaml(tmp_path: Path) -> Path:
    (path,) = (tmp_path / "project").glob("models/marts/**/_*__models.yml")
    return path


def models(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    current, history = yaml.safe_load(models_yaml(tmp_path).read_text())["models"]
    return current, history


def test_a_debezium_table_gaining_a_column_and_widening_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_kcat_file(tmp_path / "landing" / "payments-0.json", [payment(1, 1), payment(2, 1)])
    scaffold_models(tmp_path, "public.payments")
    path = models_yaml(tmp_path)
    # The user's own words, which an update must keep.
    path.write_text(
        path.read_text().replace("  - name: payments_history\n", "  # Reviewed by Ann.\n  - name: payments_history\n")
    )
    assert run(tmp_path, capsys, "--check", "public.payments")[:2] == (
        0,
        ["The typed marts of public.payments (payments_current, payments_history) are up to date with what landed."],
    )

    write_kcat_file(tmp_path / "landing" / "payments-1.json", [changed_payment(3)])
    status, lines, err = run(tmp_path, capsys, "--check", "public.payments")
    assert (status, err) == (1, "")
    both = "payments_current, payments_history"
    assert lines == [
        f"{both}: amount is decimal(12,2); what landed needs decimal(14,2)"
        " (org.apache.kafka.connect.data.Decimal with precision 14 and scale 2 in the Debezium schema)",
        f"{both}: version_2 is int; what landed needs bigint (int64 in the Debezium schema)",
        f"{both}: field `note` has landed and is not declared (string: string in the Debezium schema)",
        "3 finding(s): `cdc-dbt scaffold --update public.payments` adds the new columns and widens the types.",
    ]

    before = path.read_text()
    status, lines, err = run(tmp_path, capsys, "--update", "public.payments")
    assert (status, err) == (0, "")
    assert lines == [
        f"{both}: widened amount decimal(12,2) -> decimal(14,2)"
        " (org.apache.kafka.connect.data.Decimal with precision 14 and scale 2 in the Debezium schema)",
        f"{both}: widened version_2 int -> bigint (int64 in the Debezium schema)",
        f"{both}: added note string, reading field `note` (string in the Debezium schema)",
        f"Updated {path}: review it, then run `cdc-dbt build`.",
    ]
    current, history = models(tmp_path)
    for model in (current, history):
        columns = {column["name"]: column for column in model["columns"]}
        assert types_of(model)["amount"] == "decimal(14,2)"
        assert types_of(model)["version_2"] == "bigint"
        assert columns["note"] == {
            "name": "note",
            "data_type": "string",
            "description": "`note` of public.payments (string in the Debezium schema).",
            "meta": {"cdc_field": "note"},
        }
    # After the row's other columns, before the ones every mart has; nothing else moved.
    assert list(types_of(current))[-3:] == ["note", "last_op", "last_changed_ts"]
    assert list(types_of(history))[-5:] == ["note", "valid_from", "valid_to", "is_current", "ended_by"]
    after = path.read_text()
    assert "  # Reviewed by Ann.\n  - name: payments_history\n" in after
    assert after.startswith(before.split("version: 2")[0])  # the scaffold's header comment
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    assert [line[2:].strip() for line in diff if line.startswith("- ")] == [
        "data_type: decimal(12,2)", "data_type: int",
    ] * 2  # fmt: skip
    assert [line[2:].strip() for line in diff if line.startswith("+ ") and "data_type" in line] == [
        "data_type: decimal(14,2)", "data_type: bigint", "data_type: string",
    ] * 2  # fmt: skip

    assert run(tmp_path, capsys, "--check", "public.payments")[0] == 0
    assert run(tmp_path, capsys, "--update", "--all")[1] == [
        "The typed marts compared (2 models of 1 source tables) are up to date with what landed: nothing changed."
    ]
    assert path.read_text() == after


# --- A Qlik DDL change: a new table version -------------------------------------------------------

JOBS_V1: dict[str, ColumnSpec] = {
    "JOB_ID": ("STRING", 10, 0, 0, 1),
    "MIN_SALARY": ("NUMERIC", 0, 8, 2, 0),
    "HEADCOUNT": ("INT4", 0, 10, 0, 0),
}
JOBS_V2: dict[str, ColumnSpec] = {
    **JOBS_V1,
    "MIN_SALARY": ("NUMERIC", 0, 12, 3, 0),
    "HEADCOUNT": ("INT8", 0, 19, 0, 0),
    "TITLE": ("WSTRING", 35, 0, 0, 0),
}


def test_a_qlik_table_version_with_a_new_column_and_wider_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    version_1 = [
        KafkaRecord("qlik.metadata", 0, 0, None, qlik_metadata("S1", "HR", "JOBS", JOBS_V1)),
        KafkaRecord("qlik.HR.JOBS", 0, 0, '{"JOB_ID":"A"}',
                    qlik_data("S1", "INSERT", {"JOB_ID": "A", "MIN_SALARY": "1.00", "HEADCOUNT": "3"})),
    ]  # fmt: skip
    write_kcat_file(tmp_path / "landing" / "qlik-0.json", version_1)
    current, _ = scaffold_models(tmp_path, "HR.JOBS")
    assert types_of(current)["min_salary"] == "decimal(8,2)"
    assert run(tmp_path, capsys, "--check", "--all")[0] == 0

    row = {"JOB_ID": "B", "MIN_SALARY": "123456789.125", "HEADCOUNT": "5000000000", "TITLE": "Cook"}
    version_2 = [
        KafkaRecord("qlik.metadata", 0, 1, None, qlik_metadata("S2", "HR", "JOBS", JOBS_V2, table_version=2)),
        KafkaRecord("qlik.HR.JOBS", 0, 1, '{"JOB_ID":"B"}', qlik_data("S2", "INSERT", row)),
    ]
    write_kcat_file(tmp_path / "landing" / "qlik-1.json", version_2)
    status, lines, _ = run(tmp_path, capsys, "--check", "--all")
    both = "jobs_current, jobs_history"
    assert status == 1
    assert lines == [
        f"{both}: min_salary is decimal(8,2); what landed needs decimal(12,3) (Qlik NUMERIC(12,3))",
        f"{both}: headcount is int; what landed needs bigint (Qlik INT8)",
        f"{both}: field `TITLE` has landed and is not declared (string: Qlik WSTRING(35))",
        "3 finding(s): `cdc-dbt scaffold --update --all` adds the new columns and widens the types.",
    ]
    status, lines, _ = run(tmp_path, capsys, "--update", "HR.JOBS")
    assert status == 0
    assert lines[:3] == [
        f"{both}: widened min_salary decimal(8,2) -> decimal(12,3) (Qlik NUMERIC(12,3))",
        f"{both}: widened headcount int -> bigint (Qlik INT8)",
        f"{both}: added title string, reading field `TITLE` (Qlik WSTRING(35))",
    ]
    for model in models(tmp_path):
        assert {n: t for n, t in types_of(model).items() if n in ("min_salary", "headcount", "title")} == {
            "min_salary": "decimal(12,3)",
            "headcount": "bigint",
            "title": "string",
        }
    assert run(tmp_path, capsys, "--check", "HR.JOBS")[0] == 0


# --- Never narrowing, never guessing --------------------------------------------------------------


def test_a_narrower_type_landing_leaves_the_wider_declared_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_kcat_file(tmp_path / "landing" / "payments-0.json", [changed_payment(3)])
    current, _ = scaffold_models(tmp_path, "public.payments")
    assert (types_of(current)["amount"], types_of(current)["version_2"]) == ("decimal(14,2)", "bigint")
    before = models_yaml(tmp_path).read_text()
    # The source goes back to numeric(12,2) and integer.
    write_kcat_file(tmp_path / "landing" / "payments-1.json", [payment(4, 1, ts_ms=1_900_000_000_000)])
    assert run(tmp_path, capsys, "--check", "public.payments")[0] == 0
    status, lines, _ = run(tmp_path, capsys, "--update", "public.payments")
    assert status == 0
    assert lines[-1].endswith("up to date with what landed: nothing changed.")
    assert models_yaml(tmp_path).read_text() == before


def test_a_type_no_clean_widening_holds_is_said_and_left_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_kcat_file(tmp_path / "landing" / "payments-0.json", [payment(1, 1)])
    scaffold_models(tmp_path, "public.payments")
    text_line = {**PAYMENT_FIELDS, "line": {"type": "string"}}  # ALTER COLUMN line TYPE text
    after = {"id": 5, "line": "5a", "amount": decimal_text(1), "paid_on": 1, "paid_at": 1, "is_refund": True,
             "First Name": "Cy", "version": 1}  # fmt: skip
    message = debezium_message(after, text_line, ts_ms=1_800_000_000_000)
    write_kcat_file(tmp_path / "landing" / "payments-1.json", [KafkaRecord("p", 0, 9, '{"id":5,"line":"5a"}', message)])

    status, lines, _ = run(tmp_path, capsys, "--check", "public.payments")
    assert status == 1
    assert lines[0] == (
        "payments_current, payments_history: line is int and cannot hold what landed"
        " (string in the Debezium schema): int cannot hold string: not a widening"
    )
    before = models_yaml(tmp_path).read_text()
    status, lines, _ = run(tmp_path, capsys, "--update", "public.payments")
    assert status == 1
    assert lines == [
        "payments_current, payments_history: left line int: what landed (string in the Debezium schema) int"
        " cannot hold string: not a widening; change it by hand, or pass --widen-to-string"
    ]
    assert models_yaml(tmp_path).read_text() == before

    status, lines, _ = run(tmp_path, capsys, "--update", "public.payments", "--widen-to-string")
    assert status == 0
    assert lines[0] == (
        "payments_current, payments_history: widened line int -> string (string in the Debezium schema)"
    )
    assert all(types_of(model)["line"] == "string" for model in models(tmp_path))


def test_json_values_beyond_a_declared_int(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A table without a schema: the values decide, by what they need."""
    small = debezium_message({"id": 1, "score": 7}, None)
    write_kcat_file(tmp_path / "landing" / "t-0.json", [KafkaRecord("t", 0, 0, '{"id":1}', small)])
    scaffold_models(tmp_path, "public.payments")
    path = models_yaml(tmp_path)
    # Reviewed: the user knows `score` is 32-bit.
    path.write_text(
        path.read_text().replace(
            "data_type: bigint\n        description: '`score`", "data_type: int\n        description: '`score`"
        )
    )
    assert [types_of(model)["score"] for model in models(tmp_path)] == ["int", "int"]
    assert run(tmp_path, capsys, "--check", "public.payments")[0] == 0

    large = debezium_message({"id": 2, "score": 2**40}, None)
    write_kcat_file(tmp_path / "landing" / "t-1.json", [KafkaRecord("t", 0, 1, '{"id":2}', large)])
    status, lines, _ = run(tmp_path, capsys, "--check", "public.payments")
    assert status == 1
    assert lines[0] == (
        "payments_current, payments_history: score is int; what landed needs bigint (integers seen in the rows)"
    )


# --- Which marts, and usage mistakes --------------------------------------------------------------


def test_the_demos_example_marts_are_up_to_date_with_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    """The examples declare every field the demo lands (their typed_mart_behind_landed test passes),
    in types holding every value (the reviews' votes are int: the values fit)."""
    settings = Settings(
        project_dir=PACKAGE_PROJECT_DIR, landing_dir=DEMO_LANDING, warehouse_dir=Path(), master_url=None
    )
    assert main(["--check", "--all"], settings) == 0
    assert capsys.readouterr().out.splitlines() == [
        "The typed marts compared (10 models of 5 source tables) are up to date with what landed."
    ]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--check"], "name a source table, or --all"),
        (["--check", "--all", "public.payments"], "not both"),
        (["--check", "no.such_table"], "no typed mart in"),
        (["--update", "public.payments", "--force"], "not with --check or --update"),
        (["public.payments", "--all"], "go with --check or --update"),
        (["--check", "public.payments", "--widen-to-string"], "--widen-to-string goes with --update"),
    ],
)
def test_usage_mistakes_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    scaffold_models(tmp_path, "public.payments")
    status, lines, err = run(tmp_path, capsys, *argv)
    assert (status, lines) == (2, [])
    assert err.count("\n") == 1
    assert words in err


def test_no_marts_at_all_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    status, lines, err = run(tmp_path, capsys, "--check", "--all")
    assert (status, lines) == (2, [])
    assert "no typed mart in" in err
    assert err.count("\n") == 1


def test_a_mart_whose_table_has_not_landed_is_said_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_kcat_file(tmp_path / "landing" / "p.json", [payment(1, 1)])
    scaffold_models(tmp_path, "public.payments")
    (tmp_path / "landing" / "p.json").unlink()
    write_kcat_file(tmp_path / "landing" / "other.json", [payment(1, 1, table="public.refunds")])
    status, lines, _ = run(tmp_path, capsys, "--check", "--all")
    assert status == 0
    assert (
        lines[0]
        == "payments_current, payments_history: not compared: nothing of public.payments (postgresql) has landed"
    )
    status, _, err = run(tmp_path, capsys, "--check", "public.payments")
    assert status == 2
    assert "nothing of public.payments (postgresql) has landed" in err


# --- Writing the YAML back ------------------------------------------------------------------------

HAND_WRITTEN = """\
# Our payments mart.
version: 2
models:
  - name: payments_current   # the live rows
    config:
      meta: {cdc_source_table: public.payments, cdc_connector: postgresql}
    columns:
      - name: row_key
        data_type: string
      - name: amount
        data_type: 'decimal(12,2)'   # money
        meta:
          cdc_field: amount

      # The columns every mart has.
      - name: last_op
        data_type: string
"""


def test_the_yaml_is_edited_in_place_keeping_what_the_user_wrote() -> None:
    entry = {"name": "note", "data_type": "string", "description": "A note.", "meta": {"cdc_field": "note"}}
    edited = edit_models_yaml(HAND_WRITTEN, {"payments_current": ModelEdit({"amount": "decimal(14,2)"}, [entry])})
    assert edited == HAND_WRITTEN.replace("'decimal(12,2)'", "decimal(14,2)").replace(
        "          cdc_field: amount\n",
        "          cdc_field: amount\n      - name: note\n        data_type: string\n        description: A note.\n"
        "        meta:\n          cdc_field: note\n",
    )


def test_a_yaml_these_edits_cannot_reach_is_refused() -> None:
    flow = "version: 2\nmodels:\n  - name: m\n    columns: [{name: a, data_type: int, meta: {cdc_field: a}}]\n"
    with pytest.raises(YamlEditError, match="not a block list"):
        edit_models_yaml(flow, {"m": ModelEdit({"a": "bigint"})})


def test_the_scaffold_writes_the_behind_landed_test_on_the_current_mart(tmp_path: Path) -> None:
    current, history = scaffold_models(tmp_path, "inventory.customers", landing_dir=DEMO_LANDING)
    assert {"cdc_dbt.typed_mart_behind_landed": {"config": {"severity": "warn"}}} in current["data_tests"]
    assert all("cdc_dbt.typed_mart_behind_landed" not in test for test in history["data_tests"])
    generic = (PACKAGE_PROJECT_DIR / "macros" / "generic_tests" / "typed_mart_behind_landed.sql").read_text()
    assert "{% test typed_mart_behind_landed(model) %}" in generic
    assert "cdc-dbt scaffold --update" in generic
    for path in PACKAGE_PROJECT_DIR.glob("models/marts/examples/**/_*__models.yml"):
        example_current = yaml.safe_load(path.read_text())["models"][0]
        assert {"typed_mart_behind_landed": {"config": {"severity": "warn"}}} in example_current["data_tests"]


def test_a_yaml_of_two_documents_is_refused() -> None:
    with pytest.raises(YamlEditError, match="one YAML document"):
        edit_models_yaml(HAND_WRITTEN + "---\nversion: 2\n", {"payments_current": ModelEdit({"amount": "bigint"})})


def test_new_columns_go_at_the_end_of_a_list_with_no_fixed_column_after_its_row_columns() -> None:
    text = (
        "version: 2\nmodels:\n  - name: a\n    columns:\n    - name: x\n      data_type: int\n"
        "      meta: {cdc_field: x}\n\n# The next model.\n  - name: b\n    columns:\n"
        "      - name: last_op\n        data_type: string\n"
    )
    entry = {"name": "n", "data_type": "bigint", "meta": {"cdc_field": "n"}}
    edited = edit_models_yaml(text, {"a": ModelEdit({"x": "bigint"}, [entry]), "b": ModelEdit({}, [entry])})
    assert edited == (
        "version: 2\nmodels:\n  - name: a\n    columns:\n    - name: x\n      data_type: bigint\n"
        "      meta: {cdc_field: x}\n    - name: n\n      data_type: bigint\n      meta:\n        cdc_field: n\n"
        "\n# The next model.\n  - name: b\n    columns:\n      - name: n\n        data_type: bigint\n"
        "        meta:\n          cdc_field: n\n      - name: last_op\n        data_type: string\n"
    )
