"""The whole loop with real parts: a PostgreSQL 15 database, Debezium 3.6.3's PostgreSQL connector
(pgoutput) writing into a real Kafka broker, `cdc-dbt land`'s reading of it (in this suite's
session, to spare a JVM start: test_land.py runs the command itself), then `cdc-dbt build`'s models. The
tables are then compared with what PostgreSQL itself holds, value by value, after a snapshot and
a first round of changes, and again after a second round built incrementally.

The workload has every PostgreSQL type a user has (numeric with and without scale and beyond 38
digits, money, floats, boolean, text TOASTed and left unchanged by an update under REPLICA IDENTITY
DEFAULT, bytea, date, time, timetz, timestamp, timestamptz, interval, uuid, json, jsonb, arrays, an
enum, NULLs), a primary-key update, deletes, a truncate and multi-statement transactions. Debezium
writes with the converter's schema into one database's topics and without it into another's.
"""

import base64
import datetime as dt
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cdc_dbt.land import land, topic_selection
from cdc_dbt.settings import Settings
from tests.integration.conftest import DbtProject, copy_of_project
from tests.real_parts.debezium_to_kafka import DebeziumToKafka, EngineConfig, start_debezium_to_kafka
from tests.real_parts.kafka_broker import KafkaBroker
from tests.real_parts.postgres import Postgres, start_postgres

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "cdc_dbt.cli"]
SCHEMA = "real_pg"
LONG_TEXT = 9000
"""Characters of a text stored out of line (TOASTed): an update that leaves it alone sends Debezium's
`__debezium_unavailable_value` under REPLICA IDENTITY DEFAULT."""

COLUMNS = {
    "id": "integer primary key",
    "n_scaled": "numeric(40, 5)",
    "n_free": "numeric",
    "n_wide": "numeric(60, 12)",
    "price": "money",
    "f4": "real",
    "f8": "double precision",
    "flag": "boolean",
    "small": "smallint",
    "big": "bigint",
    "notes": "text",
    "blob": "bytea",
    "day": "date",
    "at_time": "time",
    "at_timetz": "timetz",
    "at_ts": "timestamp",
    "at_tstz": "timestamptz",
    "took": "interval",
    "ref": "uuid",
    "doc": "json",
    "docb": "jsonb",
    "ints": "integer[]",
    "texts": "text[]",
    "feeling": "mood",
}
SCHEMA_SQL = f"""
create type mood as enum ('sad', 'ok', 'happy');
create table everything ({", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())});
alter table everything alter column notes set storage external;
create table orders (id integer primary key, item text not null, quantity integer);
"""
SNAPSHOT_SQL = f"""
insert into everything values
    (1, 12345678901234567890123456789012345.12345, 3.14159265358979323846264338327950288419716939937510,
     123456789012345678901234567890123456789012345.123456789012, '1234.56', 1.5, 2.718281828459045, true,
     -32768, 9223372036854775807, 'short', '\\xdeadbeef', '2024-02-29', '04:05:06.789', '23:59:59.5+05:30',
     '2024-02-29 23:59:59.123456', '2024-02-29 23:59:59.123456+05:30', '3 days 04:05:06.789',
     'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{"a": [1, 2.50, null]}}', '{{"b": {{"c": "d"}}}}', '{{1,2,3}}',
     '{{"x","y z"}}', 'happy'),
    (2, -0.00001, 1e-20, 0, '-0.01', -0.25, 1e300, false, 0, -1, repeat('x', {LONG_TEXT}), '', '1970-01-01',
     '00:00:00', '00:00:00+00', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '-3 days', null, 'null',
     '[]', '{{}}', '{{}}', 'sad'),
    (3, {", ".join("null" for _ in list(COLUMNS)[1:])});
insert into orders values (1, 'apple', 3), (2, 'pear', 1), (3, 'plum', 7);
"""
FIRST_CHANGES_SQL = """
update everything set n_scaled = n_scaled + 1, feeling = 'ok', at_tstz = '2025-06-30 12:00:00+00' where id = 1;
update everything set small = 7 where id = 2;
begin;
insert into everything (id, n_free, notes, ints)
    values (4, 99999999999999999999999999999999999999999.5, 'four', '{4}');
update orders set quantity = quantity + 1 where id = 1;
delete from everything where id = 3;
commit;
update orders set id = 10 where id = 2;
truncate orders;
insert into orders values (20, 'fig', 2);
"""
SECOND_CHANGES_SQL = """
begin;
update everything set notes = 'no longer long', price = '0.99' where id = 2;
update everything set n_wide = -1.000000000001 where id = 4;
insert into orders values (21, 'kiwi', null);
commit;
delete from everything where id = 1;
insert into everything (id, texts) values (5, '{"a,b","\\"quoted\\""}');
update orders set quantity = 5 where id = 20;
"""
DATABASES = {"with_schema": True, "without_schema": False}
"""Each database's Debezium writes with the converter's schema or without it."""


@dataclass
class Pipeline:
    postgres: Postgres
    kafka: KafkaBroker
    engines: list[DebeziumToKafka]
    landing: Path
    spark: SparkSession
    settings: Settings
    """The suite's session's."""

    def land(self) -> list[str]:
        """What `cdc-dbt land --pattern 'pg_.*'` lands (its offsets beside the build's tables): its report."""
        settings = replace(self.settings, landing_dir=self.landing, schema=SCHEMA)
        selection = topic_selection(["--pattern", r"pg_.*"])
        return land(self.spark, settings, selection, {"bootstrap.servers": self.kafka.bootstrap_servers})

    def change(self, sql: str) -> None:
        """Run `sql` in every database, then wait until each Debezium has sent it all."""
        before = [engine.status()["records"] for engine in self.engines]
        for database in DATABASES:
            self.postgres.execute(sql, database=database)
        for engine, count in zip(self.engines, before, strict=True):
            wait_for_quiet(engine, count)


def wait_for_quiet(engine: DebeziumToKafka, count_before: int, quiet_seconds: float = 2.0) -> None:
    """Wait until the runner has produced more records than `count_before` and then nothing for
    `quiet_seconds`: what the database wrote has reached Kafka."""
    deadline = time.monotonic() + 120
    last, last_change = count_before, time.monotonic()
    while time.monotonic() < deadline:
        records = engine.status()["records"]
        if records != last:
            last, last_change = records, time.monotonic()
        if last > count_before and time.monotonic() - last_change > quiet_seconds:
            return
        time.sleep(0.2)
    raise AssertionError(f"Debezium sent {last - count_before} records and did not settle: {engine.status()}")


@pytest.fixture(scope="module")
def pipeline(
    kafka_broker: KafkaBroker,
    dbt_project: DbtProject,
    session_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Pipeline]:
    folder = tmp_path_factory.mktemp("real-pg")
    with start_postgres(folder / "postgres") as postgres:
        engines = []
        try:
            for database, schemas in DATABASES.items():
                postgres.create_database(database)
                postgres.execute(SCHEMA_SQL + SNAPSHOT_SQL, database=database)
                config = EngineConfig(
                    bootstrap_servers=kafka_broker.bootstrap_servers,
                    folder=str(folder / f"debezium-{database}"),
                    database_port=postgres.port,
                    database_name=database,
                    topic_prefix=f"pg_{database}",
                    schemas_enable=schemas,
                    provide_transaction_metadata=True,
                    slot_name=f"slot_{database}",
                    publication_name=f"publication_{database}",
                )
                engines.append(start_debezium_to_kafka(config))
            for engine in engines:
                engine.wait_until_streaming()
            yield Pipeline(postgres, kafka_broker, engines, folder / "landing", dbt_project.spark, session_settings)
        finally:
            for engine in engines:
                engine.stop()


def pg_rows(postgres: Postgres, database: str, table: str) -> dict[int, dict[str, Any]]:
    """The table as PostgreSQL holds it, each row as row_to_json gives it (numbers as Decimal), by id;
    an interval also as PostgreSQL counts its microseconds (`<column>_us`), Debezium's unit."""
    intervals = [name for name, kind in COLUMNS.items() if kind == "interval"] if table == "everything" else []
    extra = "".join(f", (extract(epoch from t.{name}) * 1000000)::bigint" for name in intervals)
    rows = {}
    for line in postgres.execute(
        f"select row_to_json(t)::text{extra} from {table} as t", database=database
    ).splitlines():
        row_json, *microseconds = line.split("|")
        row = json.loads(row_json, parse_float=Decimal)
        row.update(
            {f"{name}_us": int(value) if value else None for name, value in zip(intervals, microseconds, strict=True)}
        )
        rows[row["id"]] = row
    return rows


def current_rows(dbt_project: DbtProject, database: str, table: str) -> dict[int, dict[str, Any]]:
    rows = dbt_project.spark.sql(
        f"select row_key, `row` from {SCHEMA}.cdc_current where source_db = '{database}'"
        f" and source_table = 'public.{table}'"
    ).collect()
    return {json.loads(row.row_key)["id"]: json.loads(row.row, parse_float=Decimal) for row in rows}


def versions(dbt_project: DbtProject, database: str, table: str) -> dict[int, list[str | None]]:
    """Each key's versions in order, as the change that ended each (`ended_by`, null while current)."""
    rows = dbt_project.spark.sql(
        f"select row_key, version, ended_by from {SCHEMA}.cdc_history where source_db = '{database}'"
        f" and source_table = 'public.{table}' order by row_key, version"
    ).collect()
    ended: dict[int, list[str | None]] = {}
    for row in rows:
        ended.setdefault(json.loads(row.row_key)["id"], []).append(row.ended_by)
    return ended


def utc_time_of_day(value: str) -> dt.time:
    """A time with a zone ('23:59:59.5+05:30', '18:29:59.5Z') as the UTC time of day."""
    zoned = dt.datetime.combine(dt.date(2000, 1, 3), dt.time.fromisoformat(value))
    return zoned.astimezone(dt.UTC).time().replace(tzinfo=None)


def decimal_of(value: str) -> Decimal:
    """A money value as PostgreSQL writes it ('-$1,234.56')."""
    return Decimal(value.replace("$", "").replace(",", ""))


def unscaled_bytes(value: str, scale: int) -> Decimal:
    """Debezium's Decimal without its schema: base64 of the unscaled two's-complement integer."""
    unscaled = int.from_bytes(base64.b64decode(value), "big", signed=True)
    return Decimal(unscaled).scaleb(-scale, Context(prec=1000))  # exact: no rounding to 28 digits


SCALES = {"n_scaled": 5, "n_wide": 12, "price": 2}
SELF_DESCRIBING = ("id", "f4", "f8", "flag", "small", "big", "notes", "blob", "at_timetz", "at_tstz", "took",
                   "ref", "doc", "docb", "ints", "texts", "feeling")  # fmt: skip
"""What a row change without the converter's schema still says exactly: the rest (decimals, dates,
times, timestamps without a zone) is written as numbers only the schema gives a meaning to."""


def assert_same_value(name: str, ours: Any, theirs: Any, pg_row: dict[str, Any]) -> None:
    """One column of `cdc_current.row` against PostgreSQL's value, in the form docs/message-formats.md
    gives each Debezium type."""
    if theirs is None or ours is None:
        assert ours is theirs is None or (name in ("doc", "docb") and ours == "null"), (name, ours, theirs)
        return
    kind = COLUMNS[name]
    if kind.startswith("numeric"):
        assert Decimal(ours) == theirs, name
        if name in SCALES:  # a Decimal's string has its schema's scale
            assert -Decimal(ours).as_tuple().exponent == SCALES[name], (name, ours)
    elif kind == "money":
        assert (Decimal(ours), -Decimal(ours).as_tuple().exponent) == (decimal_of(theirs), 2), name
    elif kind in ("real", "double precision"):
        assert float(ours) == float(theirs), name
    elif kind == "bytea":
        assert base64.b64decode(ours) == bytes.fromhex(theirs.removeprefix("\\x")), name
    elif kind == "time":
        assert dt.time.fromisoformat(ours) == dt.time.fromisoformat(theirs), name
    elif kind == "timetz":
        assert utc_time_of_day(ours) == utc_time_of_day(theirs), name
    elif kind in ("timestamp", "timestamptz"):
        assert dt.datetime.fromisoformat(ours) == dt.datetime.fromisoformat(theirs), name
    elif kind == "interval":
        assert ours == pg_row[f"{name}_us"], name
    elif kind in ("json", "jsonb"):
        assert json.loads(ours, parse_float=Decimal) == theirs, name
    else:
        assert ours == theirs, (name, ours, theirs)


@dataclass
class Snapshot:
    """Both sides after one land and build."""

    postgres: dict[tuple[str, str], dict[int, dict[str, Any]]]
    current: dict[tuple[str, str], dict[int, dict[str, Any]]]
    versions: dict[tuple[str, str], dict[int, list[str | None]]]
    quarantined: int


@pytest.fixture(scope="module")
def snapshots(pipeline: Pipeline, dbt_project: DbtProject) -> list[Snapshot]:
    """The snapshot and first changes landed and built, then the second changes landed and built
    incrementally into the same schema."""
    taken = []
    for changes in (FIRST_CHANGES_SQL, SECOND_CHANGES_SQL):
        pipeline.change(changes)
        pipeline.land()
        dbt_project.build(pipeline.landing, schema=SCHEMA, data_tests=not taken)
        tables = [(database, table) for database in DATABASES for table in ("everything", "orders")]
        taken.append(
            Snapshot(
                postgres={(db, table): pg_rows(pipeline.postgres, db, table) for db, table in tables},
                current={(db, table): current_rows(dbt_project, db, table) for db, table in tables},
                versions={(db, table): versions(dbt_project, db, table) for db, table in tables},
                quarantined=dbt_project.spark.sql(f"select count(*) from {SCHEMA}.cdc_quarantine").first()[0],
            )
        )
    return taken


@pytest.mark.parametrize("build", [0, 1], ids=["first", "incremental"])
def test_current_state_with_the_schema_equals_postgres_value_by_value(snapshots: list[Snapshot], build: int) -> None:
    snapshot = snapshots[build]
    for table in ("everything", "orders"):
        theirs, ours = snapshot.postgres["with_schema", table], snapshot.current["with_schema", table]
        assert sorted(ours) == sorted(theirs), table
        for key, row in theirs.items():
            assert sorted(ours[key]) == sorted(name for name in row if not name.endswith("_us")), (table, key)
            for name, value in ours[key].items():
                if table == "everything":
                    assert_same_value(name, value, row[name], row)
                else:
                    assert value == row[name], (table, key, name)
    assert snapshot.quarantined == 0


@pytest.mark.parametrize("build", [0, 1], ids=["first", "incremental"])
def test_without_the_schema_what_the_values_say_is_kept_exactly(snapshots: list[Snapshot], build: int) -> None:
    snapshot = snapshots[build]
    theirs, ours = snapshot.postgres["without_schema", "everything"], snapshot.current["without_schema", "everything"]
    assert sorted(ours) == sorted(theirs)
    for key, row in theirs.items():
        for name in SELF_DESCRIBING:
            assert_same_value(name, ours[key][name], row[name], row)
        if row["day"] is not None:  # days, microseconds: Debezium's numbers, as written
            assert ours[key]["day"] == (dt.date.fromisoformat(row["day"]) - dt.date(1970, 1, 1)).days
            assert ours[key]["at_ts"] == (
                dt.datetime.fromisoformat(row["at_ts"]) - dt.datetime(1970, 1, 1)
            ) // dt.timedelta(microseconds=1)
        for name, scale in SCALES.items():
            if row[name] is not None:
                expected = decimal_of(row[name]) if name == "price" else row[name]
                assert unscaled_bytes(ours[key][name], scale) == expected, (key, name)
    assert snapshot.current["without_schema", "orders"] == snapshot.postgres["without_schema", "orders"]


def test_history_has_a_version_per_change_ended_as_the_database_ended_it(snapshots: list[Snapshot]) -> None:
    first, second = snapshots
    for database in DATABASES:
        assert first.versions[database, "everything"] == {1: ["u", None], 2: ["u", None], 3: ["d"], 4: [None]}
        assert second.versions[database, "everything"] == {
            1: ["u", "d"],
            2: ["u", "u", None],
            3: ["d"],
            4: ["u", None],
            5: [None],
        }
        # Order 1 updated then truncated; order 2's key changed (a delete of 2, a create of 10, which
        # the truncate ended); 3 truncated; 20 inserted after the truncate.
        assert first.versions[database, "orders"] == {1: ["u", "t"], 2: ["d"], 3: ["t"], 10: ["t"], 20: [None]}
        assert second.versions[database, "orders"] == {
            1: ["u", "t"],
            2: ["d"],
            3: ["t"],
            10: ["t"],
            20: ["u", None],
            21: [None],
        }


def as_row_json(name: str, typed: Any) -> Any:
    """A typed mart's value in the form `cdc_current.row` gives it, to compare the same way."""
    if isinstance(typed, Decimal):
        return str(typed)
    if isinstance(typed, dt.datetime):  # the session is in UTC: a timestamptz comes back in UTC
        return typed.isoformat() + ("+00:00" if COLUMNS[name] == "timestamptz" else "")
    if isinstance(typed, dt.date):
        return typed.isoformat()
    return typed


def test_every_transaction_is_whole_once_landed_as_the_connector_names_it(
    snapshots: list[Snapshot], dbt_project: DbtProject
) -> None:
    """The connector names a transaction's BEGIN, events and END each `txId:<the LSN it had just
    read>`: once everything has landed, each transaction is one row, complete, named by its BEGIN,
    and the consistent current state is the current state."""
    transactions = dbt_project.spark.sql(
        f"select transaction_id, is_begin_landed, is_complete, landed_event_count from {SCHEMA}.cdc_transactions"
    ).collect()
    multi_statement = [row for row in transactions if row.landed_event_count > 1]
    assert multi_statement, "the workload's multi-statement transactions"
    assert [row for row in transactions if not (row.is_complete and row.is_begin_landed)] == []
    points = dbt_project.spark.sql(f"select distinct consistent_ts from {SCHEMA}.cdc_current_consistent").collect()
    assert [point.consistent_ts for point in points] == [None]
    consistent, current = (
        dbt_project.spark.sql(f"select source_db, source_table, row_key, row from {SCHEMA}.{view}").collect()
        for view in ("cdc_current_consistent", "cdc_current")
    )
    assert sorted(consistent) == sorted(current)


def test_a_scaffolded_typed_mart_holds_every_value_postgres_holds(
    pipeline: Pipeline, snapshots: list[Snapshot], dbt_project: DbtProject, tmp_path: Path
) -> None:
    project = copy_of_project(tmp_path / "project")
    run = subprocess.run(
        [*CLI, "scaffold", "public.everything", "--folder", "scaffolded", "--name", "pg_everything"],
        cwd=project, env={"PATH": "/nonexistent", "CDC_LANDING_DIR": str(pipeline.landing)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    dbt_project.build(pipeline.landing, schema=SCHEMA, select="path:models/marts/scaffolded", project_dir=project)
    typed = dbt_project.spark.sql(
        f"select * from {SCHEMA}.pg_everything_current where source_db = 'with_schema'"
    ).collect()
    theirs = snapshots[-1].postgres["with_schema", "everything"]
    assert sorted(row.id for row in typed) == sorted(theirs)
    for row in typed:
        for name, value in theirs[row.id].items():
            if not name.endswith("_us"):
                assert_same_value(name, as_row_json(name, row[name]), value, theirs[row.id])
