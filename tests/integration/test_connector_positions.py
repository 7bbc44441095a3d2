"""MySQL, MariaDB, SQL Server and Oracle events landed in reverse order still give versions in source order.

Each connector's row goes through a snapshot read and three updates, written to Kafka in reverse
(the last update at offset 0, the snapshot read last), with one update delivered again at a new
offset as a restarted connector sends it: the build must order the versions by the connector's
own position (docs/ordering-and-history.md#event-order), never by offset, and apply the update
delivered twice once. The positions cross what text order gets wrong: a binlog file rollover
(`.000009` to `.000010`), SQL Server LSN segments whose hex digits sort otherwise as text, Oracle
SCNs beyond 64 bits. One stream is a MySQL stream flattened by ExtractNewRecordState, its positions
in `__file`, `__pos`, `__row`.

Each connector writes its own `source.db`, so the rows never mix.
"""

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.integration.conftest import Build
from tests.kcat import KafkaRecord

KEY = '{"id":1}'
SNAPSHOT_TS_MS = 1_700_000_000_000
"""`source.ts_ms` of the snapshot read; each update is a second later than the one before."""


@dataclass(frozen=True)
class Stream:
    """One connector's events of row 1, in source order: a snapshot read, then three updates."""

    topic: str
    source_db: str
    payloads: tuple[str, ...]


def rows() -> list[dict[str, Any]]:
    return [{"id": 1, "version": version} for version in range(4)]


def envelope(op: str, before: dict[str, Any] | None, after: dict[str, Any], source: dict[str, Any]) -> str:
    return json.dumps({"before": before, "after": after, "source": source, "op": op, "ts_ms": source["ts_ms"] + 5})


def envelopes(sources: list[dict[str, Any]]) -> tuple[str, ...]:
    """The snapshot read and three updates of row 1, with `sources` (one each) as their `source`."""
    images = rows()
    return tuple(
        envelope("r" if index == 0 else "u", None if index == 0 else images[index - 1], images[index], source)
        for index, source in enumerate(sources)
    )


def times(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**source, "ts_ms": SNAPSHOT_TS_MS + 1000 * index} for index, source in enumerate(sources)]


def mysql_stream(connector: str, file_prefix: str) -> Stream:
    base = {"connector": connector, "name": "shop", "db": f"{connector}_shop", "table": "items", "server_id": 1}
    sources = [
        {**base, "snapshot": "true", "file": f"{file_prefix}.000009", "pos": 157, "row": 0},
        # Streaming resumes at the coordinates the snapshot read at: the first update shares them.
        {**base, "snapshot": "false", "file": f"{file_prefix}.000009", "pos": 157, "row": 0},
        {**base, "snapshot": "false", "file": f"{file_prefix}.000009", "pos": 98765, "row": 1},
        {**base, "snapshot": "false", "file": f"{file_prefix}.000010", "pos": 4, "row": 0},
    ]
    return Stream(f"{connector}.shop.items", base["db"], envelopes(times(sources)))


def sqlserver_stream() -> Stream:
    base = {"connector": "sqlserver", "name": "shop", "db": "sqlserver_shop", "schema": "dbo", "table": "items"}
    sources = [
        {**base, "snapshot": "true", "commit_lsn": "00000027:00000758:0003"},
        {**base, "commit_lsn": "00000027:00000758:0003", "change_lsn": "00000027:00000750:0002", "event_serial_no": 1},
        # 0x9ff follows 0x758, though "000009ff" sorts before "00000758" as text.
        {**base, "commit_lsn": "00000027:000009ff:0001", "change_lsn": "00000027:000009f0:0002", "event_serial_no": 1},
        {**base, "commit_lsn": "00000028:00000010:0001", "change_lsn": "00000028:00000008:0004", "event_serial_no": 1},
    ]
    return Stream("sqlserver.shop.dbo.items", base["db"], envelopes(times(sources)))


def oracle_stream() -> Stream:
    base = {"connector": "oracle", "name": "shop", "db": "oracle_shop", "schema": "SHOP", "table": "ITEMS"}
    sources = [
        {**base, "snapshot": "true", "scn": "9223372036854775806", "commit_scn": None},
        # One transaction, two SCNs; then a transaction committed beyond 2^64.
        {
            **base,
            "scn": "9223372036854775807",
            "commit_scn": "9223372036854775809",
            "rs_id": " 0x000024.00004a1e.0010 ",
        },
        {
            **base,
            "scn": "9223372036854775808",
            "commit_scn": "9223372036854775809",
            "rs_id": " 0x000024.00004a1f.0010 ",
        },
        {
            **base,
            "scn": "18446744073709551617",
            "commit_scn": "18446744073709551618",
            "rs_id": " 0x000025.00000002.0010 ",
        },
    ]
    return Stream("oracle.SHOP.ITEMS", base["db"], envelopes(times(sources)))


def flattened_mysql_stream() -> Stream:
    """ExtractNewRecordState with `add.fields=op,db,table,file,pos,row,snapshot,source.ts_ms`."""
    positions = [("true", "mysql-bin.000009", 157, 0), ("false", "mysql-bin.000009", 157, 0)]
    positions += [("false", "mysql-bin.000009", 98765, 1), ("false", "mysql-bin.000010", 4, 0)]
    payloads = tuple(
        json.dumps(
            {
                **row,
                "__op": "r" if index == 0 else "u",
                "__db": "flattened_shop",
                "__table": "items",
                "__snapshot": snapshot,
                "__file": file,
                "__pos": pos,
                "__row": binlog_row,
                "__source_ts_ms": SNAPSHOT_TS_MS + 1000 * index,
            }
        )
        for index, (row, (snapshot, file, pos, binlog_row)) in enumerate(zip(rows(), positions, strict=True))
    )
    return Stream("flattened.shop.items", "flattened_shop", payloads)


STREAMS = {
    "mysql": mysql_stream("mysql", "mysql-bin"),
    "mariadb": mysql_stream("mariadb", "mariadb-bin"),
    "sqlserver": sqlserver_stream(),
    "oracle": oracle_stream(),
    "flattened mysql": flattened_mysql_stream(),
}


def landed_records(stream: Stream) -> list[KafkaRecord]:
    """The events in reverse source order, then the second update again (a connector restart)."""
    in_reverse = list(reversed(stream.payloads))
    records = [KafkaRecord(stream.topic, 0, offset, KEY, payload) for offset, payload in enumerate(in_reverse)]
    return [*records, KafkaRecord(stream.topic, 0, len(records), KEY, stream.payloads[2])]


def landing_files() -> dict[str, list[KafkaRecord]]:
    """Each connector's stream, by kcat file name: built in conftest.py's combined_build, each
    stream's rows read by its own source database."""
    return {f"{stream.topic}.json": landed_records(stream) for stream in STREAMS.values()}


@pytest.fixture(scope="module")
def build(combined_build: Build) -> Build:
    return combined_build


@pytest.mark.parametrize("connector", list(STREAMS))
def test_versions_follow_the_source_position_not_the_offsets(build: Build, connector: str) -> None:
    stream = STREAMS[connector]
    history = build.rows(
        "select version, row, unix_millis(valid_from) as valid_from_ms, unix_millis(valid_to) as valid_to_ms,"
        f" is_current, ended_by from `{{schema}}`.cdc_history where source_db = '{stream.source_db}'"
    )
    starts = [SNAPSHOT_TS_MS + 1000 * index for index in range(4)]
    assert sorted(
        (row["version"], json.loads(row["row"]), row["valid_from_ms"], row["valid_to_ms"], row["ended_by"])
        for row in history
    ) == [
        (
            version + 1,
            image,
            starts[version],
            starts[version + 1] if version < 3 else None,
            "u" if version < 3 else None,
        )
        for version, image in enumerate(rows())
    ]


@pytest.mark.parametrize("connector", list(STREAMS))
def test_the_current_row_is_the_last_update_at_the_source(build: Build, connector: str) -> None:
    stream = STREAMS[connector]
    current = build.rows(f"select row_key, row from `{{schema}}`.cdc_current where source_db = '{stream.source_db}'")
    assert [(row["row_key"], json.loads(row["row"])) for row in current] == [(KEY, rows()[-1])]
