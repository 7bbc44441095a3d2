"""`udfs.json_text`: every number reads back with the digits its source wrote."""

from decimal import Decimal

import orjson
import pytest

from udfs.json_text import dumps, loads


@pytest.mark.parametrize(
    "text",
    [
        # decimal.format=NUMERIC: a DECIMAL(40, 3) and a DECIMAL(38, 10) as JSON numbers.
        "123456789876543212345678987654321.110",
        "2222222222222222300000001111.1234567890",
        "-123456789876543212345678987654321.110",
        # 17 significant digits that are not a double's shortest text: 0.1's exact binary value.
        "0.1000000000000000055511151231257827",
        "0.10000000000000001",
        # A long mantissa with an exponent, and numbers below a double's normal range.
        "1234567890123456789e-5",
        "4.9e-324",
        "1e-400",
    ],
)
def test_a_fraction_a_double_cannot_hold_keeps_its_digits(text: str) -> None:
    value = loads(f'{{"amount":{text}}}')["amount"]
    assert isinstance(value, Decimal)
    assert value == Decimal(text)
    assert value.as_tuple() == Decimal(text).as_tuple()  # trailing zeros too


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3.14", 3.14),
        ("0.30000000000000004", 0.30000000000000004),
        ("-1113574.2356240735", -1113574.2356240735),
        ("1.000011", 1.000011),
        ("1.10", 1.1),  # a trailing zero is no digit a double loses
        ("1E2", 100.0),
        ("2.2250738585072014e-308", 2.2250738585072014e-308),
        ("1.7976931348623157e308", 1.7976931348623157e308),
    ],
)
def test_a_fraction_a_double_holds_stays_a_double(text: str, expected: float) -> None:
    value = loads(f'{{"weight":{text},"ts_ns":1700000000000000000}}')
    assert value == {"weight": expected, "ts_ns": 1_700_000_000_000_000_000}
    assert isinstance(value["weight"], float)


def test_integers_of_any_width_stay_exact() -> None:
    text = '{"a":18446744073709551616,"b":-9223372036854775809,"c":12345678901234567890123456789012345678901}'
    assert loads(text) == {"a": 2**64, "b": -(2**63) - 1, "c": 12345678901234567890123456789012345678901}


def test_number_text_inside_strings_stays_text() -> None:
    text = '{"s":"123456789876543212345678987654321.110","t":"1e-400","u":"0000-00-00 1-100","n":0.5}'
    assert loads(text) == {
        "s": "123456789876543212345678987654321.110",
        "t": "1e-400",
        "u": "0000-00-00 1-100",
        "n": 0.5,
    }


def test_dumps_writes_an_exact_fraction_as_a_string_of_its_digits() -> None:
    row = loads('{"id":1,"amount":123456789876543212345678987654321.110,"weight":3.14,"big":100000000000000000000}')
    assert (
        dumps(row)
        == '{"id":1,"amount":"123456789876543212345678987654321.110","weight":3.14,"big":100000000000000000000}'
    )
    assert dumps(loads('{"b":0.1000000000000000055511151231257827,"a":1}'), sort_keys=True) == (
        '{"a":1,"b":"0.1000000000000000055511151231257827"}'
    )


def test_ordinary_doubles_are_written_as_orjson_alone_writes_them() -> None:
    text = '{"a":3.14,"b":0.30000000000000004,"c":1e-05,"d":1.5e+300,"e":-0.0,"f":100.0,"ts_ns":1700000000000000000}'
    written = (
        '{"a":3.14,"b":0.30000000000000004,"c":0.00001,"d":1.5e+300,"e":-0.0,"f":100.0,"ts_ns":1700000000000000000}'
    )
    assert dumps(loads(text)) == orjson.dumps(orjson.loads(text)).decode() == written
