import pytest

from udfs.positions import (
    SNAPSHOT_READ,
    STREAMED,
    db2_position,
    mongodb_position,
    mysql_position,
    oracle_position,
    postgres_position,
    sort_key,
    sqlserver_position,
)


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


# --- MySQL and MariaDB: binlog coordinates --------------------------------------------------


def binlog(file: str, pos: int, row: int = 0, snapshot: object = "false") -> dict[str, object]:
    return {"file": file, "pos": pos, "row": row, "snapshot": snapshot}


def test_mysql_binlog_file_then_pos_then_row() -> None:
    assert mysql_position(binlog("mysql-bin.000003", 1442, 1)) == (3, 1442, STREAMED, 1)
    in_order = [binlog("mysql-bin.000003", 392), binlog("mysql-bin.000003", 1442), binlog("mysql-bin.000003", 1442, 1)]
    keys = [sort_key("s", mysql_position(source) or ()) for source in in_order]
    assert keys == sorted(keys) and len(set(keys)) == 3


def test_mysql_binlog_rollover_compares_the_file_suffix_as_a_number() -> None:
    # `mysql-bin.000010` at pos 4 comes after `mysql-bin.000009` at any pos; so does `.1000000`
    # (MySQL widens the suffix past 999999) after `.999999`.
    for earlier, later in [
        (binlog("mysql-bin.000009", 98765), binlog("mysql-bin.000010", 4)),
        (binlog("mysql-bin.999999", 98765), binlog("mysql-bin.1000000", 4)),
        (binlog("mysql-bin.000009", 9), binlog("mysql-bin.000009", 10)),
    ]:
        assert sort_key("s", mysql_position(earlier) or ()) < sort_key("s", mysql_position(later) or ())


@pytest.mark.parametrize(
    "snapshot", ["true", "first", "first_in_data_collection", "last_in_data_collection", "last", True]
)
def test_mysql_snapshot_read_comes_before_a_streamed_change_at_the_same_coordinates(snapshot: object) -> None:
    # Streaming resumes at the binlog coordinates the snapshot was read at: their events can share them.
    read = mysql_position(binlog("mysql-bin.000003", 157, snapshot=snapshot))
    streamed = mysql_position(binlog("mysql-bin.000003", 157))
    later_read = mysql_position(binlog("mysql-bin.000004", 4, snapshot=snapshot))  # a blocking snapshot, later
    assert read is not None and streamed is not None and later_read is not None
    assert sort_key("s", read) < sort_key("s", streamed) < sort_key("s", later_read)


@pytest.mark.parametrize("snapshot", ["false", "incremental", False, None])
def test_mysql_streamed_and_incremental_snapshot_events_rank_as_streamed(snapshot: object) -> None:
    assert mysql_position(binlog("mysql-bin.000003", 157, snapshot=snapshot)) == (3, 157, STREAMED, 0)


@pytest.mark.parametrize(
    "source",
    [
        {},
        binlog("", 0),  # as Paimon's test data writes it: no binlog coordinates at all
        binlog("mysql-bin", 157),
        binlog("mysql-bin.²", 157),
        {"file": "mysql-bin.000003", "pos": -1},
        {"file": "mysql-bin.000003", "pos": "157x"},
        {"file": 3, "pos": 157},
        {"file": "mysql-bin." + "1" * 100, "pos": 157},
    ],
)
def test_mysql_without_binlog_coordinates_has_no_position(source: dict[str, object]) -> None:
    assert mysql_position(source) is None


def test_mysql_row_defaults_to_zero() -> None:
    assert mysql_position({"file": "mysql-bin.000001", "pos": "4"}) == (1, 4, STREAMED, 0)


# --- SQL Server: commit LSN, change LSN, event serial number ---------------------------------


def test_sqlserver_commit_lsn_then_change_lsn_then_event_serial_no_as_hex_numbers() -> None:
    source = {"commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:00000758:0005", "event_serial_no": 2}
    assert sqlserver_position(source) == (0x27, 0x758, 3, 0x27, 0x758, 5, 2)
    in_order = [
        {"commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:00000758:0002", "event_serial_no": 1},
        {"commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:00000758:0002", "event_serial_no": 2},
        {"commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:0000075a:0001", "event_serial_no": "1"},
        # `0x9ff` > `0x758` though "000009ff" < "00000758" as text; and a longer segment after shorter.
        {"commit_lsn": "00000027:000009ff:0001", "change_lsn": "00000027:000009fe:0004", "event_serial_no": 1},
        {"commit_lsn": "00000028:00000010:0001", "change_lsn": "00000028:00000008:0004", "event_serial_no": 1},
        {"commit_lsn": "100000000:00000010:0001", "change_lsn": "100000000:00000008:0004"},
    ]
    keys = [sort_key("s", sqlserver_position(source) or ()) for source in in_order]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_sqlserver_snapshot_read_has_its_commit_lsn_alone_and_comes_first() -> None:
    read = sqlserver_position({"commit_lsn": "00000027:00000758:0003", "change_lsn": None, "snapshot": "true"})
    streamed = sqlserver_position({"commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:00000750:0002"})
    assert read == (0x27, 0x758, 3)
    assert streamed is not None and sort_key("s", read) < sort_key("s", streamed)


@pytest.mark.parametrize(
    "source",
    [{}, {"change_lsn": "00000027:00000758:0005"}, {"commit_lsn": "-1"}, {"commit_lsn": "0x27:1:1"}, {"commit_lsn": 5}],
)
def test_sqlserver_without_a_commit_lsn_has_no_position(source: dict[str, object]) -> None:
    assert sqlserver_position(source) is None


# --- Oracle: commit SCN, SCN, redo record ------------------------------------------------------

KAFKA = (0, 17)


def oracle(
    commit_scn: object, scn: object, rs_id: object = None, ssn: object = 0, **fields: object
) -> dict[str, object]:
    return {"commit_scn": commit_scn, "scn": scn, "rs_id": rs_id, "ssn": ssn, "snapshot": "false", **fields}


def test_oracle_commit_scn_then_scn_then_redo_record() -> None:
    source = oracle("3107237", "3107236", " 0x000024.00004a1e.0010 ", 0)
    assert oracle_position(source, KAFKA) == (3107237, STREAMED, 3107236, 0x24, 0x4A1E, 0x10, 0)
    in_order = [
        # One transaction (commit 20): its changes by SCN, then by redo record within one SCN.
        oracle("20", "10", "0x000024.00004a1e.0010"),
        oracle("20", "10", "0x000024.00004a1e.0100"),
        oracle("20", "10", "0x000024.00004a1f.0010"),
        oracle("20", "10", "0x000024.00004a1f.0010", 1),
        oracle("20", "11", "0x000024.00004a00.0010"),
        # The next transaction to commit, whose change came first.
        oracle("21", "9", "0x000025.00000001.0010"),
    ]
    keys = [sort_key("s", oracle_position(source, KAFKA) or ()) for source in in_order]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_oracle_scns_beyond_64_bits_compare_exactly() -> None:
    big = 2**64 + 1
    in_order = [
        oracle(str(2**63 - 1), str(2**63 - 2), "0x000001.00000001.0010"),
        oracle(str(2**63), str(2**63 - 1), "0x000001.00000001.0010"),
        oracle(str(big), str(big - 1), "0x000001.00000001.0010"),
        # Integers a double cannot tell apart, and SCNs wider than any Spark integer.
        oracle(str(big + 1), str(big), "0x000001.00000001.0010"),
        oracle(str(10**40), str(10**40 - 1), "0x000001.00000001.0010"),
    ]
    numbers = [oracle_position(source, KAFKA) for source in in_order]
    assert numbers[3] == (big + 1, STREAMED, big, 1, 1, 0x10, 0)
    keys = [sort_key("s", position or ()) for position in numbers]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_oracle_snapshot_read_is_its_scn_and_comes_before_changes_committed_there() -> None:
    read = oracle_position({"scn": "5000", "commit_scn": None, "snapshot": "last"}, KAFKA)
    committed_at_snapshot = oracle_position(oracle("5000", "4990", "0x000001.00000001.0010"), KAFKA)
    committed_after = oracle_position(oracle("5001", "4995", "0x000001.00000001.0010"), KAFKA)
    assert read == (5000, SNAPSHOT_READ)
    assert committed_at_snapshot is not None and committed_after is not None
    assert sort_key("s", read) < sort_key("s", committed_at_snapshot) < sort_key("s", committed_after)


def test_oracle_without_rs_id_breaks_ties_within_an_scn_by_kafka_position() -> None:
    # Two updates of one row in one transaction at one SCN, by a connector that gives no rs_id:
    # distinct positions (never deduplicated as one event), in Kafka order.
    first = oracle_position(oracle("20", "10"), (0, 5))
    second = oracle_position(oracle("20", "10", "garbage"), (0, 6))
    assert first == (20, STREAMED, 10, 0, 5)
    assert second is not None and sort_key("s", first) < sort_key("s", second)
    # Across SCNs the source still decides, whatever the offsets.
    assert sort_key("s", oracle_position(oracle("19", "9"), (0, 99)) or ()) < sort_key("s", first)


def test_oracle_commit_scn_defaults_to_the_scn() -> None:
    assert oracle_position({"scn": "42", "rs_id": "0x1.2.3"}, KAFKA) == (42, STREAMED, 42, 1, 2, 3, 0)


@pytest.mark.parametrize(
    "source",
    [{}, oracle("20", None), oracle("20", "-1"), oracle("20", "1e5"), oracle("20", 10.5), oracle("20", "9" * 100)],
)
def test_oracle_without_an_scn_has_no_position(source: dict[str, object]) -> None:
    assert oracle_position(source, KAFKA) is None
