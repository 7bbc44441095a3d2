"""All real parts once, end to end: PostgreSQL -> Debezium -> Kafka -> kcat, and what came out.

    python -m tests.real_parts.smoke [--keep]

Starts a PostgreSQL cluster and a Kafka broker in a temp folder, creates a table with the types
that are hard to carry (exact decimals, money, bytea, time zones, intervals, JSON, arrays, an enum,
a TOASTed text), inserts rows, starts Debezium, and once its snapshot is done updates, deletes
and truncates. Then it reads every topic back with `kcat -C -J -e`, prints how many records each
holds per operation and one change event, and stops everything. `--keep` leaves the folder (logs,
data) for a look; it is deleted otherwise.
"""

import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tests.real_parts.debezium_to_kafka import EngineConfig, start_debezium_to_kafka
from tests.real_parts.kafka_broker import KafkaBroker, kafka_jars, start_kafka
from tests.real_parts.postgres import start_postgres

T = TypeVar("T")
TABLE = "kitchen_sink"
LONG_TEXT_CHARACTERS = 9000
"""Over PostgreSQL's 8 KB page, and stored uncompressed: the value is TOASTed, which an update that
leaves it alone shows (Debezium's `__debezium_unavailable_value` under the default REPLICA IDENTITY)."""
UNAVAILABLE = "__debezium_unavailable_value"

SCHEMA_SQL = f"""
create type mood as enum ('sad', 'ok', 'happy');
create table {TABLE} (
    id integer primary key,
    amount numeric(40, 5),
    ratio numeric,
    price money,
    blob bytea,
    happened_at timestamptz,
    took interval,
    ref uuid,
    doc jsonb,
    tags integer[],
    feeling mood,
    notes text
);
-- Out of line and uncompressed (repeat() would compress to a few bytes and stay inline).
alter table {TABLE} alter column notes set storage external;
insert into {TABLE} values
    (1, 12345678901234567890123456789012345.12345, 3.14159265358979323846264338327950288419716939937510,
     '1234.56', '\\xdeadbeef', '2024-02-29 23:59:59.123456+05:30', '1 year 2 mons 3 days 04:05:06.789',
     'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{"a": [1, 2.50, null], "b": {{"c": "d"}}}}', '{{1,2,3}}',
     'happy', 'short'),
    (2, -0.00001, 1e-20, '-0.01', '', '1970-01-01 00:00:00+00', '-3 days', null, 'null', '{{}}', 'sad',
     repeat('x', {LONG_TEXT_CHARACTERS})),
    (3, null, 'NaN', null, null, 'infinity', null, null, null, null, null, null);
"""
CHANGES_SQL = f"""
update {TABLE} set amount = amount + 1, feeling = 'ok' where id = 1;
update {TABLE} set ratio = 42 where id = 2;
delete from {TABLE} where id = 3;
truncate {TABLE};
insert into {TABLE} (id, amount, notes) values (4, 0.5, 'after the truncate');
"""
EXPECTED_TABLE_RECORDS = 3 + 2 + 2 + 1 + 1
"""Snapshot reads of rows 1-3, two updates, a delete and its tombstone, the truncate, an insert."""
EXPECTED_TRANSACTION_RECORDS = 2 * 5
"""BEGIN and END of each of the five transactions streamed (snapshot reads have none)."""


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    folder = Path(tempfile.mkdtemp(prefix="cdc-dbt-real-parts-"))
    print(f"folder: {folder}")
    try:
        with real_parts(folder) as kafka:
            print_topics(kafka)
    finally:
        if keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


@contextmanager
def real_parts(folder: Path) -> Iterator[KafkaBroker]:
    """Start the three parts, make the changes, and stop all three on the way out, timing each."""
    timed("Kafka jars (cached after the first run)", kafka_jars)
    postgres = timed("PostgreSQL start", lambda: start_postgres(folder / "postgres"))
    try:
        kafka = timed("Kafka start", lambda: start_kafka(folder / "kafka"))
        try:
            timed("schema and rows", lambda: postgres.execute(SCHEMA_SQL))
            config = EngineConfig(
                bootstrap_servers=kafka.bootstrap_servers,
                folder=str(folder / "debezium"),
                database_port=postgres.port,
                provide_transaction_metadata=True,
            )
            engine = start_debezium_to_kafka(config)
            try:
                timed("Debezium start and snapshot (until streaming)", engine.wait_until_streaming)
                postgres.execute(CHANGES_SQL)
                timed(
                    "changes to reach Kafka",
                    lambda: kafka.wait_for_records(
                        [config.table_topic(TABLE), config.transaction_topic],
                        EXPECTED_TABLE_RECORDS + EXPECTED_TRANSACTION_RECORDS,
                    ),
                )
                yield kafka
            finally:
                code = timed("Debezium stop", engine.stop)
                print(f"  Debezium runner exit code {code}, status {engine.status()}")
        finally:
            timed("Kafka stop", kafka.stop)
    finally:
        timed("PostgreSQL stop", postgres.stop)


def timed(what: str, action: Callable[[], T]) -> T:
    started = time.monotonic()
    result = action()
    print(f"{what}: {time.monotonic() - started:.1f} s", flush=True)
    return result


def print_topics(kafka: KafkaBroker) -> None:
    """Each topic's records per operation, and one update's value, as kcat printed them."""
    example: dict[str, Any] | None = None
    for topic in kafka.topics():
        records = kafka.kcat_records(topic)
        operations = Counter(operation(record) for record in records)
        placeholders = sum(UNAVAILABLE in (record["payload"] or "") for record in records)
        headers = sorted({name for record in records for name in record.get("headers", [])[::2]})
        print(f"{topic}: {len(records)} records, {dict(sorted(operations.items()))}")
        print(f"  {placeholders} with {UNAVAILABLE}; header names: {headers}")
        for record in records:
            if example is None and operation(record) == "u":
                example = record
    if example is not None:
        value = json.loads(example["payload"])
        value["schema"] = f"<{len(json.dumps(value.get('schema')))} characters of Connect schema>"
        print(f"one update, key {example['key']}, value:\n{json.dumps(value, indent=2)[:6000]}")


def operation(record: dict[str, Any]) -> str:
    """A record's `op` (c, r, u, d, t), `tombstone`, or a transaction event's BEGIN/END."""
    if record["payload"] is None:
        return "tombstone"
    value = json.loads(record["payload"])
    payload = value.get("payload", value) if isinstance(value, dict) and "schema" in value else value
    return str(payload.get("op") or payload.get("status") or "?")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
