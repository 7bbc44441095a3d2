"""`cdc-dbt forget`'s arguments and what it prints, without Spark: one row, or a batch of rows."""

import pytest

from cdc_dbt.forget import Erasure, ForgetError, ForgetReport, erasure_of, parse_request


def test_several_keys_are_one_request_each_key_once_in_the_order_named() -> None:
    request = parse_request(["inventory.customers", '{"id": 1004}', '{ "id":1005 }', '{"id":1004}', "--source-db", "a"])
    assert request.source_table == "inventory.customers"
    assert request.row_keys == ('{"id":1004}', '{"id":1005}')
    assert request.source_db == "a"


def test_one_bad_key_of_several_is_named() -> None:
    with pytest.raises(ForgetError, match=r"^the key '\[1005\]' is not a JSON object"):
        parse_request(["inventory.customers", '{"id": 1004}', "[1005]"])


def test_a_dash_reads_the_keys_from_standard_input_one_a_line() -> None:
    lines = ['{"id": 1004}\n', "\n", '{"id": 1005}\n', '{"id":1004}']
    assert parse_request(["inventory.customers", "-"], lines).row_keys == ('{"id":1004}', '{"id":1005}')
    with pytest.raises(ForgetError, match=r"^the key '1006' \(line 2 of standard input\) is not a JSON object"):
        parse_request(["inventory.customers", "-"], ['{"id": 1004}\n', "1006\n"])
    with pytest.raises(ForgetError, match=r"^no key on standard input"):
        parse_request(["inventory.customers", "-"], ["\n"])


def report(*erasures: Erasure) -> ForgetReport:
    return ForgetReport(
        "inventory.customers",
        list(erasures),
        removed=[("cdc_changes (view)", 4), ("cdc_current", 1)],
        landed_files=["/landing/part-0.json"],
        withheld_records=5,
        withheld_kafka_keys=1,
    )


def test_one_row_says_its_removals_under_its_line() -> None:
    lines = report(Erasure("e1", "inventory_db", '{"id":1004}')).lines()
    assert lines[:3] == [
        'cdc-dbt forget: erased inventory.customers {"id":1004} (source database inventory_db), erasure e1:',
        "  cdc_changes (view)  4 rows removed",
        "  cdc_current         1 row removed",
    ]
    assert lines[-2:] == [
        "cdc-dbt forget: the landed files that still hold its raw bytes (rewrite or expire them):",
        "  /landing/part-0.json",
    ]


def test_several_rows_each_say_their_erasure_then_the_removals_of_all() -> None:
    lines = report(Erasure("e1", "inventory_db", '{"id":1004}'), Erasure("e2", None, '{"id":1005}')).lines()
    assert lines[:4] == [
        'cdc-dbt forget: erased inventory.customers {"id":1004} (source database inventory_db), erasure e1',
        'cdc-dbt forget: erased inventory.customers {"id":1005} (no source database), erasure e2',
        "cdc-dbt forget: removed, the 2 rows together:",
        "  cdc_changes (view)  4 rows removed",
    ]
    assert "cdc-dbt forget: the landed files that still hold their raw bytes (rewrite or expire them):" in lines


def test_each_erased_record_and_key_is_listed_under_its_rows_erasure() -> None:
    first, second = Erasure("e1", "db", '{"id":1}'), Erasure("e2", "db", '{"id":2}')
    rows = {("db", "t", first.row_key): first, ("db", "t", second.row_key): second}
    of_rows = [
        {"source_db": "db", "source_table": "t", "row_key": '{"id":2}', "topic": "t", "key": "k2"},
        {"source_db": "db", "source_table": "t", "row_key": '{"id":1}', "topic": "t", "key": "k1"},
        {"source_db": "db", "source_table": "t", "row_key": '{"id":2}', "topic": "t", "key": "shared"},
        {"source_db": "db", "source_table": "t", "row_key": '{"id":1}', "topic": "t", "key": "shared"},
    ]
    listed_under = erasure_of(rows, of_rows)
    assert listed_under(of_rows[0]) is second and listed_under(of_rows[3]) is first
    tombstone = {"source_db": None, "source_table": None, "row_key": None, "topic": "t", "key": "k2"}
    assert listed_under(tombstone) is second
    assert listed_under({"topic": "t", "key": "shared"}) is first, "a key both rows carry: the first row named"
