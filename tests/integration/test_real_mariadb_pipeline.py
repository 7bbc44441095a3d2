"""A MySQL-family binlog with real parts: MariaDB 10.11 and Debezium 3.6.3's MySQL connector (its
MariaDB connector 3.6.3 is not on Maven Central; tests/real_parts/mariadb.py says how the MySQL one
reads MariaDB) writing into a real Kafka broker. What it wrote is landed with its Kafka offsets
reversed (a kcat file, the last event at offset 0), so only the binlog's own positions (`file`,
`pos`, `row`) can put each key's versions in order; then built, and compared with the tables as
MariaDB holds them, value by value.
"""

import base64
import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import DbtProject
from tests.kcat import KafkaRecord, write_kcat_file
from tests.real_parts.debezium_to_kafka import EngineConfig, start_debezium_to_kafka
from tests.real_parts.kafka_broker import KafkaBroker
from tests.real_parts.mariadb import DEBEZIUM_PASSWORD, DEBEZIUM_USER, MYSQL_CONNECTOR_VERSION, MariaDB, start_mariadb

pytestmark = pytest.mark.slow

SCHEMA = "real_mariadb"
DATABASE = "shop"
TABLES = ("everything", "orders")
SCHEMA_SQL = """
create table everything (
    id int primary key,
    amount decimal(40, 5),
    big bigint unsigned,
    happened_at datetime(6),
    stamped_at timestamp(6) null,
    day date,
    took time(6),
    doc json,
    feeling enum('sad', 'ok', 'happy'),
    payload blob,
    label varchar(100)
);
create table orders (id int primary key, item varchar(20) not null, quantity int);
insert into everything values
    (1, 12345678901234567890123456789012345.12345, 18446744073709551615, '2024-02-29 23:59:59.123456',
     '2024-02-29 23:59:59.123456', '2024-02-29', '123:45:56.789012', '{"a": [1, 2.50, null], "b": {"c": "d"}}',
     'happy', x'deadbeef', 'héllo 😀 wörld'),
    (2, -0.00001, 0, '1000-01-01 00:00:00', '1970-01-01 00:00:01', '9999-12-31', '-01:02:03.000004', 'null',
     'sad', x'', ''),
    (3, null, null, null, null, null, null, null, null, null, null);
insert into orders values (1, 'apple', 3), (2, 'pear', 1), (3, 'plum', 7);
"""
CHANGES_SQL = """
update everything set amount = 1, feeling = 'ok', took = '838:59:59' where id = 1;
update everything set amount = 2 where id = 1;
update everything set amount = 3, label = 'third' where id = 1;
delete from everything where id = 3;
update everything set id = 20 where id = 2;
begin;
insert into everything (id, amount, big, label) values (4, 0.5, 9223372036854775808, 'four 🚀');
insert into everything (id, took) values (5, '-838:59:59');
update everything set amount = 4.25 where id = 4;
commit;
update orders set quantity = quantity + 1 where id in (1, 2);
truncate orders;
insert into orders values (9, 'fig', 2);
update orders set quantity = 5 where id = 9;
"""
RECORDS_EXPECTED = (3 + 3 + 2 + 3 + 3) + (3 + 2 + 1 + 1 + 1)
"""everything: 3 snapshot reads, key 1's 3 updates, key 3's delete and its tombstone, the key
change (a delete, its tombstone, a create), the transaction's 3 events; orders: 3 snapshot reads,
2 updates, the truncate, an insert and its update."""


@dataclass
class Binlog:
    mariadb: MariaDB
    landing: Path


@pytest.fixture(scope="module")
def binlog(kafka_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Binlog]:
    """The snapshot and the changes, in Kafka as Debezium wrote them, landed in reverse."""
    folder = tmp_path_factory.mktemp("real-mariadb")
    with start_mariadb(folder / "mariadb", server_version=MYSQL_CONNECTOR_VERSION) as mariadb:
        mariadb.create_database(DATABASE)
        mariadb.execute(SCHEMA_SQL, DATABASE)
        config = EngineConfig(
            bootstrap_servers=kafka_broker.bootstrap_servers,
            folder=str(folder / "debezium"),
            database_port=mariadb.port,
            database_user=DEBEZIUM_USER,
            database_password=DEBEZIUM_PASSWORD,
            database_name=DATABASE,
            connector="mysql",
            topic_prefix="mdb",
        )
        engine = start_debezium_to_kafka(config)
        try:
            engine.wait_until_streaming()
            mariadb.execute(CHANGES_SQL, DATABASE)
            topics = [config.table_topic(table) for table in TABLES]
            kafka_broker.wait_for_records(topics, RECORDS_EXPECTED, timeout=120)
        finally:
            engine.stop()
        landing = folder / "landing"
        for topic in topics:
            records = kafka_broker.kcat_records(topic)
            reversed_offsets = [
                KafkaRecord(topic, 0, offset, record["key"], record["payload"], ts_ms=record["ts"])
                for offset, record in enumerate(reversed(records))
            ]
            write_kcat_file(landing / f"{topic}.jsonl", reversed_offsets)
        yield Binlog(mariadb, landing)


@pytest.fixture(scope="module")
def built(binlog: Binlog, dbt_project: DbtProject) -> DbtProject:
    dbt_project.build(binlog.landing, schema=SCHEMA)
    return dbt_project


EVERYTHING_AS_TEXT = """
select hex(json_object(
    'id', id, 'amount', cast(amount as char), 'big', cast(big as char),
    'happened_at', date_format(happened_at, '%Y-%m-%dT%H:%i:%s.%f'),
    'stamped_at', date_format(stamped_at, '%Y-%m-%dT%H:%i:%s.%fZ'),
    'day', cast(day as char), 'took', cast(took as char), 'doc', cast(doc as char), 'feeling', feeling,
    'payload', hex(payload), 'label', label))
from everything
"""


def mariadb_rows(mariadb: MariaDB, query: str) -> dict[int, dict[str, Any]]:
    """Each row of `query` (one hex-encoded JSON object a row: no client escaping), by id."""
    rows = (json.loads(bytes.fromhex(line[0]).decode()) for line in mariadb.rows(query, DATABASE))
    return {row["id"]: row for row in rows}


def current_rows(dbt_project: DbtProject, table: str) -> dict[int, dict[str, Any]]:
    rows = dbt_project.spark.sql(
        f"select row_key, `row` from {SCHEMA}.cdc_current where source_db = '{DATABASE}'"
        f" and source_table = '{DATABASE}.{table}'"
    ).collect()
    return {json.loads(row.row_key)["id"]: json.loads(row.row) for row in rows}


def assert_same_value(name: str, ours: Any, theirs: Any) -> None:
    if theirs is None:
        assert ours is None, name
    elif name in ("amount", "big"):
        assert ours == theirs, name  # exact, at the declared scale
    elif name == "stamped_at":
        assert dt.datetime.fromisoformat(ours) == dt.datetime.fromisoformat(theirs), name
    elif name == "doc":
        assert json.loads(ours, parse_float=Decimal) == json.loads(theirs, parse_float=Decimal), name
    elif name == "payload":
        assert base64.b64decode(ours).hex().upper() == theirs, name
    else:
        assert ours == theirs, (name, ours, theirs)


def test_current_state_equals_mariadb_value_by_value(binlog: Binlog, built: DbtProject) -> None:
    theirs, ours = mariadb_rows(binlog.mariadb, EVERYTHING_AS_TEXT), current_rows(built, "everything")
    assert sorted(ours) == sorted(theirs) == [1, 4, 5, 20]
    for key, row in theirs.items():
        assert sorted(ours[key]) == sorted(row), key
        for name, value in row.items():
            assert_same_value(name, ours[key][name], value)
    orders = mariadb_rows(
        binlog.mariadb, "select hex(json_object('id', id, 'item', item, 'quantity', quantity)) from orders"
    )
    assert current_rows(built, "orders") == orders


def ended_by(dbt_project: DbtProject, table: str) -> dict[int, list[str | None]]:
    """Each key's versions in order, as the change that ended each (null while current)."""
    rows = dbt_project.spark.sql(
        f"select row_key, version, ended_by from {SCHEMA}.cdc_history where source_db = '{DATABASE}'"
        f" and source_table = '{DATABASE}.{table}' order by row_key, version"
    ).collect()
    ended: dict[int, list[str | None]] = {}
    for row in rows:
        ended.setdefault(json.loads(row.row_key)["id"], []).append(row.ended_by)
    return ended


def test_versions_follow_the_binlog_not_the_offsets(built: DbtProject) -> None:
    key_1 = built.spark.sql(
        f"select `row` from {SCHEMA}.cdc_history where source_table = '{DATABASE}.everything'"
        """ and row_key = '{"id":1}' order by version"""
    ).collect()
    amounts = [json.loads(row.row)["amount"] for row in key_1]
    assert amounts == ["12345678901234567890123456789012345.12345", "1.00000", "2.00000", "3.00000"]
    assert ended_by(built, "everything") == {
        1: ["u", "u", "u", None],
        2: ["d"],
        3: ["d"],
        4: ["u", None],
        5: [None],
        20: [None],
    }
    assert ended_by(built, "orders") == {1: ["u", "t"], 2: ["u", "t"], 3: ["t"], 9: ["u", None]}
