import pytest

from udfs.positions import db2_position, mongodb_position, postgres_position, sort_key


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        ((9,), (10,)),
        ((99,), (100,)),
        ((34078720,), (34078720, 0)),
        ((5, 2**70), (6, 0)),
        ((1, 9), (1, 10)),
        ((2**64,), (2**64 + 1,)),
    ],
)
def test_sort_key_text_order_is_numeric_tuple_order(smaller: tuple[int, ...], larger: tuple[int, ...]) -> None:
    assert sort_key("s", smaller) < sort_key("s", larger)


def test_negative_numbers_are_not_positions() -> None:
    with pytest.raises(ValueError):
        sort_key("s", (-1,))


def test_postgres_lsn_then_sequence() -> None:
    source = {"lsn": 24023128, "sequence": '["24023119","24023128"]'}
    assert postgres_position(source) == (24023128, 24023119, 24023128)
    assert postgres_position({"lsn": None}) is None
    assert postgres_position({"lsn": 5, "sequence": '[null,"5"]'}) == (5, 0, 5)
    assert postgres_position({"lsn": 5, "sequence": "garbage"}) == (5,)


def test_db2_hex_segments() -> None:
    source = {"commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:00000758:0005"}
    assert db2_position(source) == (0x27, 0x758, 3, 0x27, 0x758, 5)
    assert db2_position({}) is None


def test_mongodb_ts_then_ord() -> None:
    assert mongodb_position({"ts_ms": 1000, "ord": 3}) == (1000, 3)
