import base64
from decimal import Decimal

import pytest

from udfs.logical_types import (
    UNAVAILABLE_VALUE,
    decode_decimal,
    decode_struct,
    decode_value,
    format_date,
    format_time,
    format_timestamp,
    is_unavailable,
    number_with_scale,
)
from udfs.reasons import Reason, RecordError


def connect_decimal(unscaled: int) -> str:
    """Base64 of the big-endian two's-complement bytes, as Kafka Connect's JsonConverter writes."""
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode()


def field(name: str, logical: str | None = None, kind: str = "int64", **parameters: str) -> dict[str, object]:
    schema: dict[str, object] = {"type": kind, "field": name}
    if logical:
        schema["name"] = logical
    if parameters:
        schema["parameters"] = parameters
    return schema


@pytest.mark.parametrize(
    ("days", "expected"),
    [(0, "1970-01-01"), (19_723, "2024-01-01"), (-1, "1969-12-31"), (2_932_896, "9999-12-31")],
)
def test_date_is_days_since_epoch(days: int, expected: str) -> None:
    assert format_date(days) == expected


def test_times_keep_their_precision() -> None:
    assert format_time(3_723_004, 3) == "01:02:03.004"
    assert format_time(3_723_000_005, 6) == "01:02:03.000005"
    assert format_time(86_399_999_999_999, 9) == "23:59:59.999999999"


def test_times_beyond_a_day_or_below_zero_read_as_the_database_prints_them() -> None:
    assert format_time(86_400_000, 3) == "24:00:00.000"  # PostgreSQL's time '24:00:00'
    assert format_time(3_020_399_000_000, 6) == "838:59:59.000000"  # MySQL's largest TIME
    assert format_time(-3_723_000_004, 6) == "-01:02:03.000004"
    assert format_time(-1, 6) == "-00:00:00.000001"


def test_timestamps_before_and_after_epoch() -> None:
    assert format_timestamp(1_596_001_099_434, 3) == "2020-07-29T05:38:19.434"
    assert format_timestamp(1_596_001_099_434_123, 6) == "2020-07-29T05:38:19.434123"
    assert format_timestamp(-1, 6) == "1969-12-31T23:59:59.999999"
    assert format_timestamp(1_596_001_099_434_123_456, 9) == "2020-07-29T05:38:19.434123456"


@pytest.mark.parametrize(
    ("unscaled", "scale", "expected"),
    [
        (1250, 2, "12.50"),
        (-5, 2, "-0.05"),
        (0, 3, "0.000"),
        (7, 0, "7"),
        (123456789012345678901234567890, 10, "12345678901234567890.1234567890"),
        (-128, 1, "-12.8"),
    ],
)
def test_connect_decimal_is_exact(unscaled: int, scale: int, expected: str) -> None:
    assert decode_decimal(connect_decimal(unscaled), scale) == expected


@pytest.mark.parametrize(
    ("number", "scale", "expected"),
    [
        # decimal.format=NUMERIC writes the decimal itself; json_text reads what a double cannot hold as a Decimal.
        (Decimal("123456789876543212345678987654321.110"), 3, "123456789876543212345678987654321.110"),
        (Decimal("2222222222222222300000001111.1234567890"), 10, "2222222222222222300000001111.1234567890"),
        (Decimal("-0.1000000000000000055511151231257827"), 34, "-0.1000000000000000055511151231257827"),
        (Decimal("1.2345678987654321234567898765432111E+32"), 3, "123456789876543212345678987654321.110"),
        # A double here is one whose shortest text is the number: that text, never its binary value.
        (1.1, 1, "1.1"),
        (12345.11, 3, "12345.110"),
        (0.1, 20, "0.10000000000000000000"),
        (1e16, 0, "10000000000000000"),
        (20000000000, 0, "20000000000"),
        (7, 2, "7.00"),
        (-5, 0, "-5"),
        (5000, -3, "5000"),
        (Decimal("-0.0"), 2, "0.00"),
    ],
)
def test_connect_decimal_written_as_a_json_number_is_exact_at_its_scale(
    number: int | float | Decimal, scale: int, expected: str
) -> None:
    assert number_with_scale(number, scale) == expected


@pytest.mark.parametrize(("number", "scale"), [(Decimal("1.15"), 1), (1.5, 0), (5, -1), (Decimal("1e-400"), 3)])
def test_a_json_number_with_more_digits_than_its_scale_is_an_invalid_value(
    number: int | float | Decimal, scale: int
) -> None:
    schema = field("amount", "org.apache.kafka.connect.data.Decimal", kind="bytes", scale=str(scale))
    with pytest.raises(RecordError) as raised:
        decode_value(number, schema, "amount")
    assert raised.value.reason is Reason.INVALID_VALUE


def test_variable_scale_decimal_is_exact_at_any_precision() -> None:
    schema = field("ratio", "io.debezium.data.VariableScaleDecimal", kind="struct")
    forty_digits = {"scale": 3, "value": connect_decimal(1234567898765432123456789876543211234567)}
    assert decode_value(forty_digits, schema) == "1234567898765432123456789876543211234.567"
    assert decode_value({"scale": 0, "value": connect_decimal(-(2**130))}, schema) == str(-(2**130))


def test_struct_decodes_each_field_by_its_schema_and_keeps_order() -> None:
    schema = {
        "type": "struct",
        "fields": [
            field("id", kind="int32"),
            field("price", "org.apache.kafka.connect.data.Decimal", kind="bytes", scale="2"),
            field("born", "io.debezium.time.Date", kind="int32"),
            field("seen", "io.debezium.time.MicroTimestamp"),
            field("at", "io.debezium.time.ZonedTimestamp", kind="string"),
            field("ratio", "io.debezium.data.VariableScaleDecimal", kind="struct"),
            field("doc", "io.debezium.data.Json", kind="string"),
        ],
    }
    value = {
        "id": 7,
        "price": connect_decimal(1999),
        "born": 19_723,
        "seen": 1_704_067_200_000_001,
        "at": "2024-01-01T00:00:00Z",
        "ratio": {"scale": 3, "value": connect_decimal(-1500)},
        "doc": '{"a": 1}',
    }
    decoded = decode_struct(value, schema)
    assert list(decoded) == list(value)
    assert decoded == {
        "id": 7,
        "price": "19.99",
        "born": "2024-01-01",
        "seen": "2024-01-01T00:00:00.000001",
        "at": "2024-01-01T00:00:00Z",
        "ratio": "-1.500",
        "doc": '{"a": 1}',
    }


def test_without_schema_values_pass_through() -> None:
    assert decode_struct({"born": 19_723}, None) == {"born": 19_723}


def test_unavailable_placeholder_is_never_decoded() -> None:
    date_schema = field("born", "io.debezium.time.Date", kind="int32")
    assert decode_value(UNAVAILABLE_VALUE, date_schema) == UNAVAILABLE_VALUE
    as_bytes = base64.b64encode(UNAVAILABLE_VALUE.encode()).decode()
    assert is_unavailable(as_bytes)
    assert not is_unavailable("something else")


@pytest.mark.parametrize(
    ("value", "schema"),
    [
        ("not base64!", field("p", "org.apache.kafka.connect.data.Decimal", kind="bytes", scale="2")),
        ("2024-01-01", field("d", "io.debezium.time.Date", kind="int32")),
        (10**12, field("d", "io.debezium.time.Date", kind="int32")),
        (True, field("d", "io.debezium.time.Date", kind="int32")),
        (12, field("z", "io.debezium.time.ZonedTimestamp", kind="string")),
    ],
)
def test_value_that_does_not_fit_its_type_is_an_invalid_value(value: object, schema: dict[str, object]) -> None:
    with pytest.raises(RecordError) as raised:
        decode_value(value, schema, "col")
    assert raised.value.reason is Reason.INVALID_VALUE
    assert raised.value.detail.startswith("col:")
