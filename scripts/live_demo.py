"""A live demo: change rows in PostgreSQL and watch them arrive in cdc-dbt's tables.

    .venv/bin/python scripts/live_demo.py                 Enter runs a round, q or Ctrl-C stops
    .venv/bin/python scripts/live_demo.py --every 60      a round now, then every 60 s (Enter: at once)
    .venv/bin/python scripts/live_demo.py --rounds 3      3 rounds, each after a scripted change, then exit
    .venv/bin/python scripts/live_demo.py --rounds 1 --no-build
                                                          the same without Spark: says what it would run

In a new temporary folder it starts a private PostgreSQL 15 with a database `shop` whose table
`public.customers` has three rows, a one-node Kafka broker, and Debezium's PostgreSQL connector
(converter schemas on, transaction metadata on, topic prefix `demo`) producing into that broker:
the real parts of the end-to-end tests (tests/real_parts). It prints how long each took to start,
and the `psql` command with which a person changes rows from another terminal.

Each round then runs `cdc-dbt land --pattern 'demo\\..*'` (the new Kafka records into the landing
folder) and `cdc-dbt build`, with the landing folder and the warehouse in the temporary folder, and
prints `cdc_current` and the newest versions in `cdc_history` of public.customers, a line a row,
through `cdc-dbt sql`. Each of those three commands starts its own Spark: a round takes a while.

Ctrl-C (or SIGTERM), `q`, or the last of `--rounds` stops Debezium, Kafka and PostgreSQL by their
PIDs, checks that they are gone, and removes the temporary folder unless `--keep` is given.
"""

import argparse
import contextlib
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TextIO, TypeVar

from confluent_kafka import Consumer, TopicPartition

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `tests.real_parts` is imported from the checkout
    sys.path.insert(0, str(REPO_ROOT))

from tests.real_parts.debezium_to_kafka import (  # noqa: E402
    STOP_GRACE_SECONDS,
    DebeziumToKafka,
    EngineConfig,
    start_debezium_to_kafka,
)
from tests.real_parts.kafka_broker import KafkaBroker, start_kafka  # noqa: E402
from tests.real_parts.postgres import POSTGRES_BIN, Postgres, postmaster_pid, start_postgres  # noqa: E402
from tests.real_parts.processes import pid_alive, stop_process, wait_until  # noqa: E402

T = TypeVar("T")

DATABASE = "shop"
TABLE = "customers"
SOURCE_TABLE = f"public.{TABLE}"
TOPIC_PREFIX = "demo"
LAND_PATTERN = rf"{TOPIC_PREFIX}\..*"
SCHEMA = "cdc"
"""The Spark database of the output tables (CDC_SCHEMA, set for the cdc-dbt commands)."""
CLI = [sys.executable, "-m", "cdc_dbt.cli"]
SETUP_SQL = f"""
create table public.{TABLE} (
    id serial primary key,
    name text not null,
    email text,
    updated_at timestamptz default now()
);
insert into public.{TABLE} (name, email) values
    ('Ada Lovelace', 'ada@example.com'),
    ('Grace Hopper', 'grace@example.com'),
    ('Alan Turing', 'alan@example.com');
"""
SNAPSHOT_ROWS = 3
EXAMPLE_STATEMENTS = (
    f"insert into {TABLE} (name, email) values ('Dora Dev', 'dora@example.com');",
    f"update {TABLE} set email = 'ada@example.org', updated_at = now() where id = 1;",
)
CHANGE_TIMEOUT_SECONDS = 60.0
QUIET_SECONDS = 1.0
"""After a scripted change reached Kafka: how long Debezium must have sent nothing more."""
KAFKA_GONE_GRACE_SECONDS = 5.0
"""How long the Debezium runner may still take to stop once the broker it flushes to has exited."""
FAILURE_LINES = 40
"""Of a failed land's or build's stdout, the last lines shown (dbt's errors are at its end)."""
CHILD_STOP_SECONDS = 30.0
"""How long a cdc-dbt command has to end after SIGINT before it is killed."""
LEFTOVER_GRACE_SECONDS = 15.0
"""How long a cdc-dbt command's own children (its Spark JVM) have to end after it, before SIGKILL."""
COMMAND_MARKER = "CDC_LIVE_DEMO_FOLDER"
"""Set for the cdc-dbt commands (and so inherited by their Spark JVMs): how the end finds any of
them still running, by PID, after a Ctrl-C."""
QUIT_WORDS = ("q", "quit", "exit")


@dataclass
class Parts:
    """The three running parts and the demo's folders."""

    folder: Path
    postgres: Postgres
    kafka: KafkaBroker
    debezium: DebeziumToKafka

    @property
    def table_topic(self) -> str:
        return self.debezium.config.table_topic(TABLE)

    @property
    def transaction_topic(self) -> str:
        return self.debezium.config.transaction_topic

    def cli_environment(self) -> dict[str, str]:
        """What the cdc-dbt commands are given: the demo's landing folder, warehouse and broker."""
        return {
            "CDC_LANDING_DIR": str(self.folder / "landing"),
            "CDC_WAREHOUSE_DIR": str(self.folder / "warehouse"),
            "CDC_KAFKA_BOOTSTRAP_SERVERS": self.kafka.bootstrap_servers,
            "CDC_SCHEMA": SCHEMA,
        }

    @property
    def work_dir(self) -> Path:
        """The cdc-dbt commands' working directory: dbt's target/ and logs/ go there, not into the checkout."""
        return self.folder / "work"


# ---- starting and stopping ----------------------------------------------------------------------


def timed(what: str, action: Callable[[], T]) -> T:
    """Run `action`, saying what is starting and how long it took."""
    print(f"{what} ...", flush=True)
    started = time.monotonic()
    result = action()
    print(f"  ready in {time.monotonic() - started:.1f} s", flush=True)
    return result


def start_shop(folder: Path) -> Postgres:
    """PostgreSQL with the database `shop` and its customers; a postmaster left behind by a failed
    or interrupted start is stopped before this raises."""
    try:
        postgres = start_postgres(folder, database=DATABASE)
    except BaseException:
        stop_orphan_postgres(folder)
        raise
    try:
        postgres.execute(SETUP_SQL)
    except BaseException:
        postgres.stop()
        raise
    return postgres


def stop_orphan_postgres(folder: Path) -> None:
    """Stop the postmaster whose PID the data folder holds, if one runs (`start_postgres` returns
    none to stop when interrupted after `pg_ctl start`)."""
    data = folder / "data"
    pid = postmaster_pid(data)
    if pid is not None and pid_alive(pid):
        Postgres(folder, data, folder, 0, pid, folder / "postgres.log").stop()


def start_parts(folder: Path, stack: ExitStack, survivors: list[str]) -> Parts:
    """Start PostgreSQL, Kafka and Debezium, each registered on `stack` to be stopped, last first;
    a part still running after its stop is added to `survivors`."""
    postgres = timed("PostgreSQL 15 (database shop, 3 customers)", lambda: start_shop(folder / "postgres"))
    stack.callback(stop_part, "PostgreSQL", postgres.pid, postgres.stop, survivors)
    kafka = timed("Kafka (the first run on a machine fetches its jars)", lambda: start_kafka(folder / "kafka"))
    stack.callback(stop_part, "Kafka", kafka.pid, kafka.stop, survivors)
    # start_kafka's readiness check leaves the broker's admin client connected. A Ctrl-C reaches the
    # broker too, which then closes that connection before `stop` drops the client, and librdkafka
    # prints the loss: dropped here. The demo counts records with short-lived consumers instead.
    kafka._admin = None
    config = EngineConfig(
        bootstrap_servers=kafka.bootstrap_servers,
        folder=str(folder / "debezium"),
        database_port=postgres.port,
        database_name=DATABASE,
        topic_prefix=TOPIC_PREFIX,
        schemas_enable=True,
        provide_transaction_metadata=True,
    )
    debezium = start_debezium_to_kafka(config)
    stack.callback(stop_part, "Debezium", debezium.pid, lambda: stop_debezium(debezium, kafka), survivors)
    timed("Debezium (snapshot in Kafka, then streaming)", lambda: wait_for_snapshot(kafka, debezium))
    (folder / "work").mkdir(exist_ok=True)
    return Parts(folder, postgres, kafka, debezium)


def wait_for_snapshot(kafka: KafkaBroker, debezium: DebeziumToKafka) -> None:
    """Until the connector streams and the snapshot's reads of the three rows are in Kafka (they
    may follow the moment it reports streaming)."""
    debezium.wait_until_streaming()
    topic = debezium.config.table_topic(TABLE)
    wait_until(lambda: record_count(kafka, topic) >= SNAPSHOT_ROWS, 60, f"the snapshot in {topic}", kafka.log)


def stop_debezium(debezium: DebeziumToKafka, kafka: KafkaBroker) -> None:
    """The runner's own stop (SIGTERM: the engine stops and flushes its last batch to Kafka, given
    a minute), except that it does not wait on a broker that is gone: a Ctrl-C reaches the broker
    too, and a batch in flight then never flushes. Once the broker has exited, the runner has
    KAFKA_GONE_GRACE_SECONDS more before SIGKILL."""
    if debezium.process.poll() is None:
        debezium.process.terminate()
        with contextlib.suppress(TimeoutError):
            wait_until(
                lambda: debezium.process.poll() is not None or kafka.process.poll() is not None,
                STOP_GRACE_SECONDS,  # the runner's own
                "the Debezium runner to stop",
            )
    stop_process(debezium.process, KAFKA_GONE_GRACE_SECONDS)  # reaps it, or ends it if it still runs


def stop_part(name: str, pid: int, stop: Callable[[], object], survivors: list[str]) -> None:
    """Stop one part by its PID (its helper's `stop`) and check that the process is gone."""
    started = time.monotonic()
    stop()
    alive = pid_alive(pid)
    if alive:
        survivors.append(f"{name} (pid {pid})")
    state = "STILL RUNNING" if alive else "gone"
    say(f"stopped {name} (pid {pid}) in {time.monotonic() - started:.1f} s: {state}")


def marked_processes(folder: Path) -> list[int]:
    """The running processes whose environment holds this demo's COMMAND_MARKER: its cdc-dbt
    commands and their Spark JVMs."""
    wanted = f"{COMMAND_MARKER}={folder}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError, ValueError):
            if wanted in environ.read_bytes().split(b"\0") and pid_alive(int(environ.parent.name)):
                found.append(int(environ.parent.name))
    return found


def stop_leftover_commands(folder: Path, survivors: list[str]) -> None:
    """Give a cdc-dbt command's processes still running (a Spark JVM exits a moment after the
    command it served) a few seconds to end, then SIGKILL them by PID."""
    pids = marked_processes(folder)
    if not pids:
        return
    say(f"waiting for {len(pids)} process(es) of a cdc-dbt command to end ...")
    with contextlib.suppress(TimeoutError):
        wait_until(lambda: not any(pid_alive(pid) for pid in pids), LEFTOVER_GRACE_SECONDS, "cdc-dbt's processes")
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        wait_until(lambda: not any(pid_alive(pid) for pid in pids), 10, "cdc-dbt's processes")
    survivors.extend(f"cdc-dbt process {pid}" for pid in pids if pid_alive(pid))


def say(text: str, stream: TextIO | None = None) -> None:
    """Print and flush, quietly doing nothing once the terminal is gone (its window closed: SIGHUP),
    so that the cleanup after it still runs to the end."""
    with contextlib.suppress(OSError):
        print(text, file=stream or sys.stdout, flush=True)


def raise_interrupt(signal_number: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


def keep_stopping(signal_number: int, frame: FrameType | None) -> None:
    say("still stopping everything: one moment")


@contextmanager
def uninterrupted_cleanup() -> Iterator[None]:
    """While the parts stop, Ctrl-C and SIGTERM only say to wait: a stop cut short leaves processes."""
    try:
        yield
    except KeyboardInterrupt:
        say("\ninterrupted: stopping Debezium, Kafka and PostgreSQL ...")
        raise
    finally:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, keep_stopping)


# ---- the psql hint ------------------------------------------------------------------------------


def psql_command(postgres: Postgres, host: str) -> list[str]:
    """psql's command line for the database `shop` (the one on PATH, else the server's own)."""
    psql = "psql" if shutil.which("psql") else str(POSTGRES_BIN / "psql")
    return [psql, "-h", host, "-p", str(postgres.port), "-U", postgres.user, "-d", DATABASE]


def print_psql_hint(postgres: Postgres) -> None:
    command = psql_command(postgres, postgres.host)
    print("\nChange rows from another terminal (trust authentication, no password):")
    print(f"  {shlex.join(command)}")
    print(f"  (or over the unix socket: {shlex.join(psql_command(postgres, str(postgres.socket_dir)))})")
    print("for example:")
    for statement in EXAMPLE_STATEMENTS:
        print(f"  {statement}")
    print("or in one line:")
    print(f"  {shlex.join(command)} -c {shell_quoted(EXAMPLE_STATEMENTS[1])}\n", flush=True)


def shell_quoted(text: str) -> str:
    """`text` as one shell word that still reads like SQL: in double quotes, `"`, `$`, `\\` and
    backquotes escaped (shlex's single quotes would turn each of SQL's into '"'"'); with a `!`
    (history expansion in an interactive bash), as shlex quotes it."""
    if "!" in text:
        return shlex.quote(text)
    return '"' + "".join(f"\\{char}" if char in '"$`\\' else char for char in text) + '"'


def shell_command(args: list[str]) -> str:
    """`python -m cdc_dbt.cli <args>` as a shell line, its SQL argument readable."""
    return " ".join([shlex.join(CLI), *(shell_quoted(arg) if " " in arg else shlex.quote(arg) for arg in args)])


def print_kafka_hint(parts: Parts) -> None:
    watch = ["kcat", "-C", "-b", parts.kafka.bootstrap_servers, "-t", parts.table_topic, "-o", "beginning"]
    print(f"Watch the change events arrive in Kafka:\n  {shlex.join(watch)}\n", flush=True)


# ---- a round ------------------------------------------------------------------------------------


def check_running(parts: Parts) -> None:
    """Raise if a part has ended by itself (Debezium stops on a SIGINT that reached only it)."""
    if parts.debezium.process.poll() is not None:
        status = parts.debezium.status()
        raise RuntimeError(f"the Debezium runner has ended ({status['state']}: {status.get('error')})")
    if parts.kafka.process.poll() is not None:
        raise RuntimeError(f"the Kafka broker has ended (exit {parts.kafka.process.returncode})")
    if not pid_alive(parts.postgres.pid):
        raise RuntimeError("PostgreSQL has ended")


def scripted_change(round_number: int) -> str:
    """The change made before round `round_number` of --rounds: an insert, an update, a delete, again."""
    kind = round_number % 3
    if kind == 1:
        return f"insert into {TABLE} (name, email) values ('Customer {round_number}', 'c{round_number}@example.com');"
    if kind == 2:
        return (
            f"update {TABLE} set email = 'round{round_number}@example.org', updated_at = now()"
            f" where id = (select min(id) from {TABLE});"
        )
    return f"delete from {TABLE} where id = (select max(id) from {TABLE});"


def make_change(parts: Parts, statement: str) -> None:
    """Run `statement` in `shop`, then wait until its change events are in Kafka and Debezium is quiet."""
    before = record_count(parts.kafka, parts.table_topic)
    print(f"psql> {statement}", flush=True)
    parts.postgres.execute(statement, database=DATABASE)
    started = time.monotonic()
    wait_until(
        lambda: record_count(parts.kafka, parts.table_topic) > before,
        CHANGE_TIMEOUT_SECONDS,
        f"the change in {parts.table_topic}",
        parts.debezium.config.path / "debezium.log",
    )
    wait_for_quiet(parts.debezium)
    after = record_count(parts.kafka, parts.table_topic)
    print(f"  in Kafka after {time.monotonic() - started:.1f} s: {after - before} new record(s)", flush=True)


def wait_for_quiet(debezium: DebeziumToKafka) -> None:
    """Until the runner's count of records sent has not moved for QUIET_SECONDS."""
    last, since = debezium.status()["records"], time.monotonic()
    deadline = since + CHANGE_TIMEOUT_SECONDS
    while time.monotonic() - since < QUIET_SECONDS and time.monotonic() < deadline:
        time.sleep(0.2)
        records = debezium.status()["records"]
        if records != last:
            last, since = records, time.monotonic()


def record_count(kafka: KafkaBroker, topic: str) -> int:
    """How many records the topic's partitions hold (0 before it exists), through a consumer made
    for the question and closed after it: no connection stays open between rounds."""
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "cdc-live-demo"})
    try:
        described = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if described is None or described.error is not None:
            return 0
        total = 0
        for partition in described.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            total += high - low
        return total
    finally:
        consumer.close()


def print_kafka_counts(parts: Parts) -> None:
    counts = {topic: record_count(parts.kafka, topic) for topic in (parts.table_topic, parts.transaction_topic)}
    print("Kafka: " + ", ".join(f"{topic} {count} records" for topic, count in counts.items()), flush=True)


def run_round(parts: Parts, number: int, options: argparse.Namespace) -> bool:
    """One round, timed. Whether all of it worked."""
    print(f"\n==== round {number} ({time.strftime('%H:%M:%S')}) ====", flush=True)
    started = time.monotonic()
    worked = round_steps(parts, number, options)
    print(f"==== round {number} {'done' if worked else 'FAILED'} in {time.monotonic() - started:.1f} s", flush=True)
    return worked


def round_steps(parts: Parts, number: int, options: argparse.Namespace) -> bool:
    """The scripted change (with --rounds), land, build, the tables; or, with --no-build, the commands."""
    check_running(parts)
    if options.rounds:
        make_change(parts, scripted_change(number))
    print_kafka_counts(parts)
    if options.no_build:
        for args in cli_steps(options.history):
            print(f"would run: {shell_command(args)}")
        return True
    for args in (["land", "--pattern", LAND_PATTERN], ["build"]):
        if not run_cli_step(parts, args, verbose=options.verbose):
            return False
    return show_tables(parts, options.history)


def cli_steps(history_rows: int) -> list[list[str]]:
    return [
        ["land", "--pattern", LAND_PATTERN],
        ["build"],
        ["sql", current_query()],
        ["sql", history_query(history_rows)],
    ]


def print_cli_environment(parts: Parts) -> None:
    """The environment each cdc-dbt command runs with, as shell lines."""
    print(f"Each round runs cdc-dbt in {parts.work_dir} with:")
    for name, value in parts.cli_environment().items():
        print(f"  export {name}={shlex.quote(value)}")
    print(flush=True)


def run_cli(parts: Parts, args: list[str]) -> tuple[int, str]:
    """Run `cdc-dbt <args>`: stderr to the console, stdout returned. On Ctrl-C the command (which
    had the SIGINT too, from the terminal) gets SIGINT and time to end, then SIGKILL."""
    process = subprocess.Popen(
        [*CLI, *args],
        cwd=parts.work_dir,
        env={**os.environ, **parts.cli_environment(), COMMAND_MARKER: str(parts.folder)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        output, _ = process.communicate()
    except BaseException:
        end_child(process)
        raise
    return process.returncode, output


def end_child(process: "subprocess.Popen[str]") -> None:
    """A cdc-dbt command ends at SIGINT (its Spark JVM when its stdin closes); SIGKILL if it hangs."""
    if process.poll() is None:
        say(f"waiting for the cdc-dbt command to end (up to {CHILD_STOP_SECONDS:.0f} s) ...")
        process.send_signal(signal.SIGINT)
        try:
            process.wait(CHILD_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_cli_step(parts: Parts, args: list[str], verbose: bool) -> bool:
    """`cdc-dbt land` or `build`, timed; of its stdout dbt's summary, the end after a failure, all with --verbose."""
    print(f"$ cdc-dbt {shlex.join(args)}", flush=True)
    started = time.monotonic()
    code, output = run_cli(parts, args)
    lines = [line for line in output.splitlines() if line.strip()]
    shown = lines if verbose else lines[-FAILURE_LINES:] if code != 0 else summary_lines(lines)
    for line in shown:
        print(f"  {line}")
    print(f"  exit {code} after {time.monotonic() - started:.1f} s", flush=True)
    return code == 0


def summary_lines(lines: list[str]) -> list[str]:
    """dbt's closing summary ('Done. PASS=...') and any error or warning line; else the last line."""
    picked = [line for line in lines if "Done." in line or "ERROR" in line or "WARN" in line.split("=", 1)[0]]
    return picked or lines[-1:]


# ---- the tables ---------------------------------------------------------------------------------


def row_filter() -> str:
    return f"source_db = '{DATABASE}' and source_table = '{SOURCE_TABLE}'"


def key_order() -> str:
    return "cast(get_json_object(row_key, '$.id') as bigint)"


def current_query() -> str:
    return f"select row_key, op, source_ts, `row` from {SCHEMA}.cdc_current where {row_filter()} order by {key_order()}"


def history_query(rows: int) -> str:
    """The newest `rows` versions (the query sorts newest first; they are printed oldest first)."""
    return (
        f"select row_key, version, valid_from, valid_to, is_current, ended_by, op, `row`"
        f" from {SCHEMA}.cdc_history where {row_filter()}"
        f" order by valid_from desc, {key_order()} desc, version desc limit {rows}"
    )


def query(parts: Parts, sql: str) -> list[dict[str, Any]] | None:
    """`cdc-dbt sql`'s rows, or None when it failed (its stderr was shown)."""
    code, output = run_cli(parts, ["sql", sql])
    if code != 0:
        print(f"  cdc-dbt sql failed (exit {code})", flush=True)
        return None
    rows = []
    for line in output.splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            print(f"  {line}")  # not a row: whatever else the command printed
    return rows


def show_tables(parts: Parts, history_rows: int) -> bool:
    started = time.monotonic()
    current = query(parts, current_query())
    history = query(parts, history_query(history_rows))
    if current is not None:
        print(f"{SCHEMA}.cdc_current, {SOURCE_TABLE}: {len(current)} rows")
        for row in current:
            print(fit(current_line(row)))
    if history is not None:
        print(f"{SCHEMA}.cdc_history, {SOURCE_TABLE}: the newest {len(history)} versions")
        for row in reversed(history):
            print(fit(history_line(row)))
    print(f"  (queried in {time.monotonic() - started:.1f} s)", flush=True)
    return current is not None and history is not None


def current_line(row: dict[str, Any]) -> str:
    """`id=1  op=u  at 12:03:04  name=... email=...`: the key, the last change, the other columns."""
    key, values = key_text(row["row_key"]), row_text(row["row"], leave_out=key_names(row["row_key"]))
    return f"  {key}  op={row['op']}  at {short_time(row['source_ts'])}  {values}"


def history_line(row: dict[str, Any]) -> str:
    """`id=1 v2  12:03:04..now       current   op=u  name=...`: a version, when it held, how it ended."""
    span = f"{short_time(row['valid_from'])}..{short_time(row['valid_to']) if row['valid_to'] else 'now':<8}"
    state = "current" if row["is_current"] else f"ended:{row['ended_by']}"
    values = row_text(row["row"], leave_out=key_names(row["row_key"]))
    return f"  {key_text(row['row_key'])} v{row['version']}  {span}  {state:<9} op={row['op']}  {values}"


def key_text(row_key: str | None) -> str:
    """`{"id":1}` as `id=1`."""
    return row_text(row_key, separator=",") if row_key else "?"


def key_names(row_key: str | None) -> frozenset[str]:
    """The key's columns: shown once, in front, not again among the row's."""
    try:
        key = json.loads(row_key or "")
    except ValueError:
        return frozenset()
    return frozenset(key) if isinstance(key, dict) else frozenset()


def row_text(row_json: str | None, separator: str = " ", leave_out: frozenset[str] = frozenset()) -> str:
    """A row's JSON as `name=value ...` (but the `leave_out` columns): strings unquoted, the rest as JSON."""
    if row_json is None:
        return "(no row)"
    try:
        row = json.loads(row_json)
    except ValueError:
        return row_json
    if not isinstance(row, dict):
        return row_json
    shown = {name: value for name, value in row.items() if name not in leave_out}
    return separator.join(
        f"{name}={value if isinstance(value, str) else json.dumps(value)}" for name, value in shown.items()
    )


def short_time(value: Any) -> str:
    """An ISO timestamp as its time of day (HH:MM:SS): a demo's changes are minutes apart."""
    text = str(value or "")
    return text[11:19] if len(text) >= 19 and text[10] in "T " else text


def fit(line: str) -> str:
    """The line cut to the terminal's width: one line a row."""
    width = shutil.get_terminal_size((160, 24)).columns
    return line if len(line) <= width else line[: width - 1] + "…"


# ---- the loop -----------------------------------------------------------------------------------


class Trigger:
    """When the next round starts: on Enter, or after --every seconds (Enter starts it sooner)."""

    def __init__(self, every: float | None) -> None:
        self.every = every
        self.stdin_open = True

    def wait(self) -> bool:
        """False when the person asked to stop (`q`, or end of input without --every)."""
        forget_typed_ahead()
        if self.every is None:
            print("Enter: land and build now; q Enter or Ctrl-C: stop > ", end="", flush=True)
            line = sys.stdin.readline()
            return line != "" and line.strip().lower() not in QUIT_WORDS
        print(f"next round in {self.every:g} s (Enter: now; q Enter or Ctrl-C: stop)", flush=True)
        deadline = time.monotonic() + self.every
        while self.stdin_open and time.monotonic() < deadline:
            ready, _, _ = select.select([sys.stdin], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return True
            line = sys.stdin.readline()
            if line == "":  # no more input (not a terminal): only the clock from now on
                self.stdin_open = False
                break
            return line.strip().lower() not in QUIT_WORDS
        time.sleep(max(0.0, deadline - time.monotonic()))
        return True


def forget_typed_ahead() -> None:
    """Drop what was typed at the terminal during the last round: an Enter pressed while Spark
    ran would otherwise start another round at once."""
    if sys.stdin.isatty():
        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(sys.stdin, termios.TCIFLUSH)


def run_rounds(parts: Parts, options: argparse.Namespace) -> int:
    """--rounds N rounds at once; else rounds until the person stops. The exit code."""
    if options.rounds:
        results = [run_round(parts, number, options) for number in range(1, options.rounds + 1)]
        failed = results.count(False)
        print(f"\n{options.rounds - failed} of {options.rounds} rounds worked", flush=True)
        return 1 if failed else 0
    trigger = Trigger(options.every)
    number = 0
    if options.every is not None:  # the first round at once
        number += 1
        run_round(parts, number, options)
    while trigger.wait():
        number += 1
        run_round(parts, number, options)
    return 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Live demo: PostgreSQL -> Debezium -> Kafka -> cdc-dbt land/build -> cdc_current, cdc_history."
    )
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--every", type=float, metavar="N", help="a round now and every N seconds (Enter: sooner)")
    when.add_argument(
        "--rounds", type=int, metavar="N", help="N rounds, each after a scripted change, with no input; then exit"
    )
    parser.add_argument("--no-build", action="store_true", help="start no Spark: print the cdc-dbt commands instead")
    parser.add_argument("--history", type=int, default=8, metavar="N", help="cdc_history versions shown (8)")
    parser.add_argument("--verbose", action="store_true", help="all of dbt's output, not its summary")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (data, logs) at the end")
    options = parser.parse_args(argv)
    if options.rounds is not None and options.rounds < 1:
        parser.error("--rounds must be at least 1")
    if options.history < 1:
        parser.error("--history must be at least 1")
    if options.every is not None and options.every <= 0:
        parser.error("--every must be more than 0")
    return options


def main(argv: list[str]) -> int:
    options = parse_args(argv)
    # Stopped like Ctrl-C, everything cleaned up; SIGINT too when started with it ignored (`&` in a script).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, raise_interrupt)
    folder = Path(tempfile.mkdtemp(prefix="cdc-live-demo-"))
    print(f"folder: {folder}", flush=True)
    survivors: list[str] = []
    code = 0
    try:
        # Left in reverse: first Ctrl-C stops interrupting, then the parts stop, Debezium first.
        with ExitStack() as stack, uninterrupted_cleanup():
            parts = start_parts(folder, stack, survivors)
            print_psql_hint(parts.postgres)
            print_kafka_hint(parts)
            print_cli_environment(parts)
            code = run_rounds(parts, options)
            print("\nstopping Debezium, Kafka and PostgreSQL ...", flush=True)
    except KeyboardInterrupt:
        code = 130
    except Exception as error:  # noqa: BLE001 - one message (with the log's end), after everything stopped
        say(f"live_demo: {error}", sys.stderr)
        code = 1
    finally:
        stop_leftover_commands(folder, survivors)
        finish(folder, options.keep, survivors)
    return 1 if survivors else code


def finish(folder: Path, keep: bool, survivors: list[str]) -> None:
    """Keep or remove the folder, and say whether every process is gone."""
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    if survivors:
        say(f"NOT stopped: {', '.join(survivors)}")
    else:
        say("every process this demo started is gone")
    if keep:
        say(f"kept {folder} (logs: postgres/postgres.log, kafka/kafka.log, debezium/debezium.log)")
    else:
        say(f"removed {folder}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
