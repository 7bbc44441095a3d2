import pytest

from udfs.masks import columns_for_mask, decode_mask
from udfs.reasons import Reason, RecordError

CUSTOMER = {1: "CUSTOMER_ID", 2: "FIRST_NAME", 3: "LAST_NAME"}


@pytest.mark.parametrize(
    ("mask", "ordinals"),
    [
        # Leading zero digits change nothing; ordinal k is bit k-1 from the low end.
        ("0B", {1, 2, 4}),
        ("000B", {1, 2, 4}),
        ("008080", {8, 16}),
        ("0b", {1, 2, 4}),
        ("0000000001", {1}),
        ("00", set()),
        ("1FFFFFFFFF", set(range(1, 38))),
        ("00FFFF", set(range(1, 17))),
        ("8000000000000000000000000000000000000001", {1, 160}),
    ],
)
def test_mask_names_the_ordinals_of_its_set_bits(mask: str, ordinals: set[int]) -> None:
    assert decode_mask(mask) == frozenset(ordinals)


def test_multi_byte_mask_reads_as_one_integer_not_byte_by_byte() -> None:
    # 0x01020304: the low byte 04 is ordinal 3, 03 is ordinals 9 and 10, 02 is 18, 01 is 25.
    assert decode_mask("01020304") == frozenset({3, 9, 10, 18, 25})
    assert decode_mask("0100") == frozenset({9})
    # A 120-column INSERT, read digit by digit from the right (each hex digit is four ordinals).
    expected = {*range(1, 71), 93, 94, 99, 100, 101, 102, 109, 112, 113, 114, 115, 116, 117}
    assert decode_mask("1F903C3000003FFFFFFFFFFFFFFFFF") == frozenset(expected)


@pytest.mark.parametrize("mask", [None, ""])
def test_missing_mask_is_none_not_an_empty_set(mask: str | None) -> None:
    # REFRESH (full load) records carry null masks: no mask was sent, not "no bit set".
    assert decode_mask(mask) is None


@pytest.mark.parametrize("mask", ["0x0B", "GG", " 0B", "0B\n", "0_B", "+0B", "-1", "\u0660", "0B.0"])
def test_anything_but_hex_digits_is_an_invalid_value(mask: str) -> None:
    with pytest.raises(RecordError) as raised:
        decode_mask(mask)
    assert raised.value.reason is Reason.INVALID_VALUE


@pytest.mark.parametrize(
    ("change_mask", "column_mask", "changed", "captured"),
    [
        # Pairs seen in an Oracle stream without full supplemental logging (corpus SOURCES.md).
        ("02", "03", ("FIRST_NAME",), ("CUSTOMER_ID", "FIRST_NAME")),
        ("06", "07", ("FIRST_NAME", "LAST_NAME"), ("CUSTOMER_ID", "FIRST_NAME", "LAST_NAME")),
        ("04", "05", ("LAST_NAME",), ("CUSTOMER_ID", "LAST_NAME")),
        ("00", "01", (), ("CUSTOMER_ID",)),
        ("00", "03", (), ("CUSTOMER_ID", "FIRST_NAME")),
    ],
)
def test_columns_for_mask_pairs(
    change_mask: str, column_mask: str, changed: tuple[str, ...], captured: tuple[str, ...]
) -> None:
    assert columns_for_mask(change_mask, CUSTOMER) == (changed, 0)
    assert columns_for_mask(column_mask, CUSTOMER) == (captured, 0)


def test_columns_come_in_ordinal_order_whatever_the_mapping_order() -> None:
    shuffled = {3: "LAST_NAME", 1: "CUSTOMER_ID", 2: "FIRST_NAME"}
    assert columns_for_mask("07", shuffled) == (("CUSTOMER_ID", "FIRST_NAME", "LAST_NAME"), 0)


def test_bits_without_a_column_are_counted_not_an_error() -> None:
    # An UPDATE with a changeMask bit one past the last known column.
    assert columns_for_mask("0A", CUSTOMER) == (("FIRST_NAME",), 1)
    assert columns_for_mask("FF", CUSTOMER) == (("CUSTOMER_ID", "FIRST_NAME", "LAST_NAME"), 5)
    assert columns_for_mask("1000000000000000000000000000000000000000", CUSTOMER) == ((), 1)


def test_gaps_in_the_ordinals_are_bits_without_a_column() -> None:
    # A column dropped from the middle of the table: ordinal 2 belongs to no column.
    sparse = {1: "ID", 3: "NAME"}
    assert columns_for_mask("07", sparse) == (("ID", "NAME"), 1)


@pytest.mark.parametrize("mask", [None, ""])
def test_missing_mask_names_every_column(mask: str | None) -> None:
    assert columns_for_mask(mask, CUSTOMER) == (("CUSTOMER_ID", "FIRST_NAME", "LAST_NAME"), 0)


def test_columns_for_invalid_mask_is_an_invalid_value() -> None:
    with pytest.raises(RecordError) as raised:
        columns_for_mask("0x03", CUSTOMER)
    assert raised.value.reason is Reason.INVALID_VALUE
