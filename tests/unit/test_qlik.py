import json
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.corpus import corpus_file
from tests.qlik_messages import qlik_data_message, qlik_envelope, qlik_metadata_message
from udfs.positions import kafka_sort_key, sort_key
from udfs.qlik import (
    is_metadata_message,
    is_qlik_message,
    message_schema_id,
    parse_data,
    parse_metadata,
    parse_qlik_record,
    parse_timestamp,
)
from udfs.reasons import QUARANTINE_REASONS
from udfs.records import parse_record

CORPUS = ("qlik", "jcustenborder-attunity-json-converter")
METADATA_TEXT = corpus_file(*CORPUS, "Metadata.json").read_text()
DATA_TEXT = corpus_file(*CORPUS, "Data.json").read_text()
CORPUS_SCHEMA_ID = "8FB9D3C10EA4B25751DF9CC8318F0A02"

CUSTOMER_COLUMNS = {"CUSTOMER_ID": 1, "FIRST_NAME": 0, "LAST_NAME": 0}


def metadata(schema_id: str, columns: dict[str, int], *, table: str = "CUSTOMERS") -> dict[str, Any]:
    """The metadata message of SALES.`table` in its envelope; `columns` maps each STRING column, in
    ordinal order, to its primaryKeyPosition (0: not in the key)."""
    typed_columns = {name: ("STRING", key_position) for name, key_position in columns.items()}
    return qlik_envelope("MD", schema_id, qlik_metadata_message(schema_id, "SALES", table, typed_columns))


def data_message(
    operation: str,
    data: dict[str, Any] | None,
    *,
    schema_id: str = "C1",
    before: dict[str, Any] | None = None,
    change_mask: str | None = None,
    column_mask: str | None = None,
    change_sequence: str | None = "",
    timestamp: str = "",
    counter: int | None = None,
) -> dict[str, Any]:
    """A data message in its envelope, of a transaction when it has a change sequence, and the
    transaction's last event when `counter` numbers it."""
    message = qlik_data_message(
        operation,
        data,
        before,
        changeSequence=change_sequence,
        timestamp=timestamp,
        transactionId="00000000000000000000000000120001" if change_sequence else "",
        changeMask=change_mask,
        columnMask=column_mask,
        transactionEventCounter=counter,
        transactionLastEvent=counter is not None,
    )
    return qlik_envelope("DT", schema_id, message)


CUSTOMERS_TEXT = json.dumps(metadata("C1", CUSTOMER_COLUMNS))
CUSTOMERS = parse_metadata(json.loads(CUSTOMERS_TEXT))


def update(**fields: Any) -> dict[str, Any]:
    row = {"CUSTOMER_ID": "14", "FIRST_NAME": "Ann", "LAST_NAME": None}
    before = {"CUSTOMER_ID": "14", "FIRST_NAME": "Anne", "LAST_NAME": None}
    defaults: dict[str, Any] = {
        "before": before,
        "change_mask": "02",
        "column_mask": "03",
        "change_sequence": "20190502181731000000000000000000197",
        "timestamp": "2019-05-02T18:17:29.000",
        "counter": 1,
    }
    defaults.update(fields)
    return data_message("UPDATE", row, **defaults)


def test_corpus_metadata_names_table_columns_and_key() -> None:
    schema = parse_metadata(json.loads(METADATA_TEXT))
    assert (schema.schema_id, schema.source_table, schema.table_version) == (CORPUS_SCHEMA_ID, "employees.salaries", 1)
    assert [(column.name, column.ordinal, column.type) for column in schema.columns] == [
        ("emp_no", 1, "INT4"),
        ("salary", 2, "INT4"),
        ("from_date", 3, "DATE"),
        ("to_date", 4, "DATE"),
    ]
    assert (schema.columns[0].length, schema.columns[0].precision, schema.columns[0].scale) == (10, 0, 0)
    assert schema.key_columns == ("emp_no", "from_date")


def test_corpus_data_message_bound_to_its_metadata_is_a_snapshot_read() -> None:
    parsed = parse_qlik_record(DATA_TEXT, METADATA_TEXT, 0, 7)
    assert (parsed.outcome, parsed.source_format, parsed.connector, parsed.op) == ("change", "qlik", "qlik", "r")
    assert (parsed.source_db, parsed.source_table) == (None, "employees.salaries")
    assert parsed.row_key == '{"emp_no":14472,"from_date":"1993-11-25"}'
    assert json.loads(parsed.after or "") == {
        "emp_no": 14472,
        "salary": 49592,
        "from_date": "1993-11-25",
        "to_date": "1994-11-25",
    }
    assert parsed.before is None
    # The full load sends null masks: every column was captured and set.
    assert parsed.unavailable_columns == ()
    assert parsed.changed_columns == ("emp_no", "salary", "from_date", "to_date")
    # REFRESH has no changeSequence nor timestamp (Qlik fills them for CDC operations only).
    assert (parsed.source_ts_ms, parsed.position, parsed.detail) == (None, kafka_sort_key(0, 7), None)


def test_corpus_messages_give_the_join_keys() -> None:
    metadata_record, data_record = parse_record(None, METADATA_TEXT, 0, 0), parse_record(None, DATA_TEXT, 0, 1)
    assert (metadata_record.ignore_class, metadata_record.qlik_schema_id) == ("metadata_message", CORPUS_SCHEMA_ID)
    assert (data_record.reason, data_record.qlik_schema_id) == ("unknown_qlik_schema", CORPUS_SCHEMA_ID)
    assert message_schema_id(json.loads(DATA_TEXT)) == CORPUS_SCHEMA_ID


def test_corpus_metadata_message_is_an_ignored_record() -> None:
    parsed = parse_qlik_record(METADATA_TEXT, None, 0, 0)
    assert (parsed.outcome, parsed.ignore_class) == ("ignored", "metadata_message")
    assert parsed.detail == f"employees.salaries schemaId {CORPUS_SCHEMA_ID}"


def test_bare_messages_parse_like_enveloped_ones() -> None:
    enveloped_metadata, enveloped_data = json.loads(METADATA_TEXT), json.loads(DATA_TEXT)
    bare_metadata, bare_data = enveloped_metadata["message"], enveloped_data["message"]
    assert all(is_qlik_message(body) for body in (enveloped_metadata, enveloped_data, bare_metadata, bare_data))
    assert is_metadata_message(bare_metadata) and not is_metadata_message(bare_data)
    schema = parse_metadata(bare_metadata)
    assert schema == parse_metadata(enveloped_metadata)
    assert parse_data(bare_data, schema, 0, 7) == parse_data(enveloped_data, schema, 0, 7)
    # A bare data message names no schema id: the caller's binding is taken as it is.
    held = parse_record(None, json.dumps(bare_data), 0, 7)
    assert (held.reason, held.qlik_schema_id) == ("unknown_qlik_schema", None)
    assert parse_qlik_record(json.dumps(bare_data), METADATA_TEXT, 0, 7).op == "r"
    bare_customers = parse_metadata(metadata("C1", CUSTOMER_COLUMNS)["message"])
    assert bare_customers == CUSTOMERS
    assert parse_data(update()["message"], bare_customers, 0, 3) == parse_data(update(), CUSTOMERS, 0, 3)


@pytest.mark.parametrize(
    "body",
    [
        {"op": "c", "before": None, "after": {"id": 1}, "source": {}},
        {"status": "BEGIN", "id": "571", "event_count": None, "data_collections": None},
        {"id": 1, "data": "a column called data", "headers": "and one called headers"},
        {"schemaId": "a column", "name": "x"},
    ],
)
def test_other_formats_are_not_qlik(body: dict[str, Any]) -> None:
    assert not is_qlik_message(body)
    assert parse_record(None, json.dumps(body), 0, 0).qlik_schema_id is None


def test_a_broken_metadata_envelope_is_quarantined() -> None:
    broken = {"magic": "atMSG", "type": "MD", "messageSchemaId": "M1", "message": "not an object"}
    parsed = parse_record(None, json.dumps(broken), 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", "invalid_envelope")


def test_an_unknown_envelope_type_is_quarantined() -> None:
    parsed = parse_record(None, json.dumps({"magic": "atMSG", "type": "XX", "message": {}}), 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", "invalid_envelope")


def test_update_with_masks_knows_changed_and_uncaptured_columns() -> None:
    parsed = parse_data(update(), CUSTOMERS, 2, 40)
    assert (parsed.op, parsed.row_key, parsed.source_table) == ("u", '{"CUSTOMER_ID":"14"}', "SALES.CUSTOMERS")
    assert parsed.changed_columns == ("FIRST_NAME",)
    # columnMask 03: LAST_NAME was not captured; its null in data means "unknown", not NULL.
    assert parsed.unavailable_columns == ("LAST_NAME",)
    assert json.loads(parsed.before or "") == {"CUSTOMER_ID": "14", "FIRST_NAME": "Anne", "LAST_NAME": None}
    assert parsed.source_ts_ms == int(datetime(2019, 5, 2, 18, 17, 29, tzinfo=UTC).timestamp() * 1000)
    assert parsed.position == sort_key("s", (20190502181731000000000000000000197, 1))
    assert (parsed.source_tx_id, parsed.transaction_id, parsed.transaction_total_order) == (
        "00000000000000000000000000120001",
        "00000000000000000000000000120001",
        1,
    )


def test_update_that_changed_nothing_it_captured() -> None:
    parsed = parse_data(update(change_mask="00", column_mask="01"), CUSTOMERS, 0, 0)
    assert (parsed.changed_columns, parsed.unavailable_columns) == ((), ("FIRST_NAME", "LAST_NAME"))


def test_update_without_masks_compares_a_full_before_image() -> None:
    assert parse_data(update(change_mask=None, column_mask=None), CUSTOMERS, 0, 0).changed_columns == ("FIRST_NAME",)
    assert parse_data(update(change_mask=None, before=None), CUSTOMERS, 0, 0).changed_columns is None


def test_insert_is_a_create() -> None:
    row = {"CUSTOMER_ID": "15", "FIRST_NAME": "Bo", "LAST_NAME": "Li"}
    body = data_message("INSERT", row, change_mask="07", column_mask="07", change_sequence="1", counter=1)
    parsed = parse_data(body, CUSTOMERS, 0, 0)
    assert (parsed.op, parsed.row_key, parsed.before) == ("c", '{"CUSTOMER_ID":"15"}', None)
    assert json.loads(parsed.after or "") == row
    assert (parsed.changed_columns, parsed.unavailable_columns) == (("CUSTOMER_ID", "FIRST_NAME", "LAST_NAME"), ())


def test_delete_takes_its_row_from_data() -> None:
    row = {"CUSTOMER_ID": "15", "FIRST_NAME": "Bo", "LAST_NAME": "Li"}
    body = data_message("DELETE", row, change_mask="01", column_mask="07", change_sequence="2", counter=1)
    parsed = parse_data(body, CUSTOMERS, 0, 1)
    assert (parsed.op, parsed.row_key, parsed.after, parsed.changed_columns) == (
        "d",
        '{"CUSTOMER_ID":"15"}',
        None,
        None,
    )
    assert json.loads(parsed.before or "") == row


def test_refresh_sorts_before_every_cdc_record_whatever_the_offsets() -> None:
    row = {"CUSTOMER_ID": "14", "FIRST_NAME": "Anne", "LAST_NAME": None}
    refresh = parse_data(data_message("REFRESH", row), CUSTOMERS, 9, 10**12)
    earliest_cdc = parse_data(update(change_sequence="0", counter=0), CUSTOMERS, 0, 0)
    assert refresh.position is not None and earliest_cdc.position is not None
    assert refresh.position < earliest_cdc.position
    # Even a REFRESH that carried a changeSequence keeps the full-load place.
    late_refresh = parse_data(data_message("REFRESH", row, change_sequence="9" * 40), CUSTOMERS, 0, 5)
    assert (late_refresh.position or "") < earliest_cdc.position


def test_cdc_records_order_by_change_sequence_as_numbers_then_event_counter() -> None:
    def position(change_sequence: str, counter: int | None, offset: int) -> str:
        parsed = parse_data(update(change_sequence=change_sequence, counter=counter), CUSTOMERS, 0, offset)
        return parsed.position or ""

    assert position("99", 1, 5) < position("100", 1, 4)
    assert position("20190502181731000000000000000000197", 1, 9) < position("20190502181731000000000000000000198", 1, 1)
    assert position("500", 1, 9) < position("500", 2, 1) < position("500", 10, 0)
    assert position("500", None, 3) == sort_key("s", (500, 0))


@pytest.mark.parametrize(
    ("counter", "last_event", "event_count"),
    [(3, True, 3), (3, "true", 3), (2, False, None), (2, None, None), (None, True, None)],
)
def test_a_transactions_last_event_tells_how_many_events_it_has(
    counter: int | None, last_event: object, event_count: int | None
) -> None:
    message = update(counter=counter)
    message["message"]["headers"]["transactionLastEvent"] = last_event
    parsed = parse_data(message, CUSTOMERS, 0, 0)
    assert (parsed.transaction_id, parsed.transaction_total_order) == ("00000000000000000000000000120001", counter)
    assert parsed.transaction_event_count == event_count


def test_cdc_record_without_a_change_sequence_falls_back_to_the_kafka_position() -> None:
    assert parse_data(update(change_sequence=""), CUSTOMERS, 3, 17).position == kafka_sort_key(3, 17)
    assert parse_data(update(change_sequence=None), CUSTOMERS, 3, 17).position == kafka_sort_key(3, 17)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019-11-11T09:13:04.067", datetime(2019, 11, 11, 9, 13, 4, 67000, tzinfo=UTC)),
        ("2023-03-21T21:34:19.511", datetime(2023, 3, 21, 21, 34, 19, 511000, tzinfo=UTC)),
        ("2019-05-02 18:17:29", datetime(2019, 5, 2, 18, 17, 29, tzinfo=UTC)),
        ("2019-05-02T18:17:29.123999", datetime(2019, 5, 2, 18, 17, 29, 123000, tzinfo=UTC)),
        ("2019-05-02T18:17:29.000Z", datetime(2019, 5, 2, 18, 17, 29, tzinfo=UTC)),
        ("1969-12-31T23:59:59.999", datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)),
    ],
)
def test_timestamp_is_utc_epoch_milliseconds(text: str, expected: datetime) -> None:
    assert parse_timestamp(text) == round(expected.timestamp() * 1000)


@pytest.mark.parametrize("text", [None, ""])
def test_missing_timestamp_is_none(text: str | None) -> None:
    assert parse_timestamp(text) is None


def test_mask_bits_without_a_column_are_counted_in_the_detail() -> None:
    # Some UPDATEs carry a changeMask bit one past the last column: ignored and counted.
    parsed = parse_data(update(change_mask="0A", column_mask="07"), CUSTOMERS, 0, 0)
    assert (parsed.outcome, parsed.changed_columns) == ("change", ("FIRST_NAME",))
    assert parsed.detail == "mask bits without a column: changeMask 1, columnMask 0"


def test_composite_key_follows_primary_key_position_not_ordinal() -> None:
    columns = {"LINE_NO": 2, "NOTE": 0, "ORDER_ID": 1}
    schema = parse_metadata(metadata("K1", columns, table="ORDER_LINES"))
    assert schema.key_columns == ("ORDER_ID", "LINE_NO")
    body = data_message("INSERT", {"LINE_NO": 2, "NOTE": "x", "ORDER_ID": 7}, change_sequence="1")
    assert parse_data(body, schema, 0, 0).row_key == '{"LINE_NO":2,"ORDER_ID":7}'


def test_each_data_message_binds_the_table_version_it_names() -> None:
    # Version 1 has LEGACY at ordinal 2; version 2 dropped it and added EMAIL at ordinal 3.
    versions = [
        metadata("V1", {"ID": 1, "LEGACY": 0, "NAME": 0}),
        metadata("V2", {"ID": 1, "NAME": 0, "EMAIL": 0}),
    ]
    by_schema_id = {}
    for version in versions:
        declared = parse_record(None, json.dumps(version), 0, 0)
        assert declared.ignore_class == "metadata_message" and declared.qlik_schema_id is not None
        by_schema_id[declared.qlik_schema_id] = json.dumps(version)

    def parse(schema_id: str, data: dict[str, Any]) -> Any:
        text = json.dumps(
            data_message(
                "UPDATE",
                data,
                schema_id=schema_id,
                change_mask="04",
                column_mask="05",
                change_sequence="7",
                timestamp="2024-01-01T00:00:00.000",
            )
        )
        held = parse_record(None, text, 0, 0)
        assert (held.reason, held.qlik_schema_id) == ("unknown_qlik_schema", schema_id)
        return parse_qlik_record(text, by_schema_id.get(schema_id), 0, 0)

    old = parse("V1", {"ID": 1, "LEGACY": None, "NAME": "n"})
    new = parse("V2", {"ID": 1, "NAME": None, "EMAIL": "e"})
    assert (old.changed_columns, old.unavailable_columns) == (("NAME",), ("LEGACY",))
    assert (new.changed_columns, new.unavailable_columns) == (("EMAIL",), ("NAME",))
    assert old.source_table == new.source_table == "SALES.CUSTOMERS"
    assert parse("V3", {"ID": 1}).reason == "unknown_qlik_schema"


def test_data_bound_to_another_versions_metadata_is_an_unknown_schema() -> None:
    text = json.dumps(update())
    other = json.dumps(metadata("OTHER", CUSTOMER_COLUMNS))
    parsed = parse_qlik_record(text, other, 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", "unknown_qlik_schema")
    assert "OTHER" in (parsed.detail or "")


def test_unknown_qlik_schema_is_a_stable_reason() -> None:
    assert "unknown_qlik_schema" in QUARANTINE_REASONS


def with_metadata(columns: dict[str, Any]) -> str:
    body = metadata("C1", CUSTOMER_COLUMNS)
    body["message"]["tableStructure"]["tableColumns"] = columns
    return json.dumps(body)


def with_ordinal(column: str, ordinal: int) -> str:
    """CUSTOMERS' metadata message with `column` at another ordinal."""
    body = metadata("C1", CUSTOMER_COLUMNS)
    body["message"]["tableStructure"]["tableColumns"][column]["ordinal"] = ordinal
    return json.dumps(body)


NO_KEY = json.dumps(metadata("C1", {"CUSTOMER_ID": 0, "FIRST_NAME": 0, "LAST_NAME": 0}))
SHARED_ORDINAL = with_ordinal("LAST_NAME", 2)


@pytest.mark.parametrize(
    ("payload", "metadata_payload", "reason"),
    [
        ("{not json", CUSTOMERS_TEXT, "invalid_json"),
        (None, CUSTOMERS_TEXT, "not_an_envelope"),
        ('{"hello": "world"}', CUSTOMERS_TEXT, "not_an_envelope"),
        (json.dumps(update()), None, "unknown_qlik_schema"),
        (json.dumps(update()), json.dumps(update()), "unknown_qlik_schema"),
        (json.dumps(data_message("UPSERT", {"CUSTOMER_ID": "1"})), CUSTOMERS_TEXT, "unknown_op"),
        (json.dumps(data_message("INSERT", None)), CUSTOMERS_TEXT, "invalid_envelope"),
        (json.dumps({**update(), "message": "not an object"}), CUSTOMERS_TEXT, "invalid_envelope"),
        (json.dumps({**update(), "type": "XX"}), CUSTOMERS_TEXT, "invalid_envelope"),
        (json.dumps(update(before=["not", "an", "object"])), CUSTOMERS_TEXT, "invalid_envelope"),
        (json.dumps(update()), with_metadata({"CUSTOMER_ID": {"type": "STRING"}}), "invalid_envelope"),
        (json.dumps(update()), with_metadata({"CUSTOMER_ID": {"ordinal": 0}}), "invalid_envelope"),
        (json.dumps(update()), with_metadata({}), "invalid_envelope"),
        (json.dumps(update()), SHARED_ORDINAL, "invalid_envelope"),
        (json.dumps(update()), NO_KEY, "missing_key"),
        (json.dumps(update(column_mask="06")), CUSTOMERS_TEXT, "missing_key"),
        (json.dumps(data_message("INSERT", {"FIRST_NAME": "x"})), CUSTOMERS_TEXT, "missing_key"),
        (json.dumps(update(change_mask="0x02")), CUSTOMERS_TEXT, "invalid_value"),
        (json.dumps(update(column_mask=3)), CUSTOMERS_TEXT, "invalid_value"),
        (json.dumps(update(timestamp="yesterday")), CUSTOMERS_TEXT, "invalid_value"),
        (json.dumps(update(timestamp="2019-02-30T00:00:00")), CUSTOMERS_TEXT, "invalid_value"),
        ("[" * 100_000 + "]" * 100_000, CUSTOMERS_TEXT, "invalid_json"),
        (json.dumps({**update(), "type": "XX"}), None, "invalid_envelope"),
        (json.dumps(update(change_sequence="12ab")), CUSTOMERS_TEXT, "invalid_value"),
        (json.dumps(update(change_sequence="-5")), CUSTOMERS_TEXT, "invalid_value"),
        (json.dumps(update(change_sequence="7" * 5000)), CUSTOMERS_TEXT, "invalid_value"),
        (json.dumps(update(counter=10**120)), CUSTOMERS_TEXT, "invalid_value"),
        (json.dumps(update(counter=True)), CUSTOMERS_TEXT, "invalid_value"),
    ],
)
def test_bad_records_get_a_reason_and_never_raise(
    payload: str | None, metadata_payload: str | None, reason: str
) -> None:
    parsed = parse_qlik_record(payload, metadata_payload, 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", reason)
    assert parsed.detail


def test_bad_metadata_message_is_quarantined_not_ignored() -> None:
    body = json.loads(METADATA_TEXT)
    del body["message"]["lineage"]
    parsed = parse_qlik_record(json.dumps(body), None, 0, 0)
    assert (parsed.outcome, parsed.reason) == ("quarantine", "invalid_envelope")
