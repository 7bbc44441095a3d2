"""Decimals written as JSON numbers reach Spark's decimal(38, s) with every digit.

Kafka's JsonConverter with `decimal.format=NUMERIC` writes a Connect Decimal as a plain JSON
number: a DECIMAL(40, 3) is `123456789876543212345678987654321.110`, which a double rounds to
1.2345678987654322E+32. The parsing core keeps its digits (`udfs.json_text`, `udfs.logical_types`);
here a build over such records shows that the row JSON of `cdc_current` casts exactly, read both
ways a consumer reads it: `get_json_object` then `cast`, and the typed marts' `from_json` with
every scalar as text then `try_cast` (macros/marts/cdc_typed_current.sql).

The payloads are written as text, never through Python's json (which would read the numbers as
doubles before they land).
"""

import json
from decimal import Decimal

import pytest

from tests.integration.conftest import Build
from tests.kcat import KafkaRecord

TOPIC = "exact_decimals.shop.ledger"
AMOUNT = "123456789876543212345678987654321.110"
"""A DECIMAL(40, 3): 36 digits, within decimal(38, 3)."""
TINY = "0.1000000000000000055511151231257827"
"""0.1's exact binary value: 34 digits no double writes, within decimal(38, 34)."""
BIG = "98765432109876543210987654321"


def decimal_field(name: str, scale: int, precision: int) -> dict[str, object]:
    parameters = {"scale": str(scale), "connect.decimal.precision": str(precision)}
    return {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": parameters, "field": name}


def with_converter_schema(after: str) -> str:
    """A MySQL create with the converter's schema, its Decimals written as JSON numbers."""
    row = {
        "type": "struct",
        "fields": [{"type": "int32", "field": "id"}, decimal_field("amount", 3, 40), decimal_field("price", 2, 10)],
    }
    schema = {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"}]}
    return f'{{"schema":{json.dumps(schema, separators=(",", ":"))},"payload":{envelope(after)}}}'


def envelope(after: str) -> str:
    source = '{"connector":"mysql","db":"shop","table":"ledger","ts_ms":1700000000000}'
    return f'{{"before":null,"after":{after},"source":{source},"op":"c","ts_ms":1700000000005}}'


def landing_files() -> dict[str, list[KafkaRecord]]:
    """Two rows of shop.ledger, by kcat file name: built in conftest.py's combined_build."""
    records = [
        KafkaRecord(TOPIC, 0, 0, '{"id":1}', with_converter_schema(f'{{"id":1,"amount":{AMOUNT},"price":19.9}}')),
        KafkaRecord(TOPIC, 0, 1, '{"id":2}', envelope(f'{{"id":2,"amount":{AMOUNT},"tiny":{TINY},"big":{BIG}}}')),
    ]
    return {f"{TOPIC}.json": records}


@pytest.fixture(scope="module")
def build(combined_build: Build) -> Build:
    return combined_build


def test_decimal_json_numbers_cast_to_decimal_38_with_every_digit(build: Build) -> None:
    rows = build.rows(
        """
        select
            row_key,
            cast(get_json_object(row, '$.amount') as decimal(38, 3)) as amount,
            try_cast(from_json(row, 'amount string').amount as decimal(38, 3)) as typed_amount,
            cast(get_json_object(row, '$.price') as decimal(10, 2)) as price,
            cast(get_json_object(row, '$.tiny') as decimal(38, 34)) as tiny,
            cast(get_json_object(row, '$.big') as decimal(38, 0)) as big
        from `{schema}`.cdc_current
        where source_table = 'shop.ledger'
        """
    )
    assert {row["row_key"]: row for row in rows} == {
        '{"id":1}': {
            "row_key": '{"id":1}',
            "amount": Decimal(AMOUNT),
            "typed_amount": Decimal(AMOUNT),
            "price": Decimal("19.90"),
            "tiny": None,
            "big": None,
        },
        '{"id":2}': {
            "row_key": '{"id":2}',
            "amount": Decimal(AMOUNT),
            "typed_amount": Decimal(AMOUNT),
            "price": None,
            "tiny": Decimal(TINY),
            "big": Decimal(BIG),
        },
    }


def test_the_row_json_carries_the_decimals_as_strings_of_their_digits(build: Build) -> None:
    rows = build.rows("select row_key, row from `{schema}`.cdc_current where source_table = 'shop.ledger'")
    assert {row["row_key"]: row["row"] for row in rows} == {
        '{"id":1}': f'{{"id":1,"amount":"{AMOUNT}","price":"19.90"}}',
        '{"id":2}': f'{{"id":2,"amount":"{AMOUNT}","tiny":"{TINY}","big":{BIG}}}',
    }
