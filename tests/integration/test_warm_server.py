"""`cdc-dbt serve`: the warm Spark Thrift (HiveServer2) server, as users and their tools reach it.

One server process on its own warehouse and port (the suite's small-input Spark settings, as every
process a test starts). Through it: the stock `dbt` CLI with `--target thrift` builds the demo and
every output table equals the in-process build's (`demo_build`, whose data tests ran: this build
runs the models and dbt's unit tests, the comparison is its oracle); a HiveServer2 client (PyHive, what dbt-spark's
thrift method uses) reads a typed mart with its types; `cdc-dbt sql` goes through the server and
prints what the in-process session prints; `cdc-dbt`'s dbt commands run in the server's process and
print what they print without it; two clients querying while an incremental build runs
get answers, each read of a table seeing it before or after a model's write, never half-written; the
same run again, with nothing new, is answered at once, and runs once a statement changed the
warehouse. SIGTERM stops it with nothing left running.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyhive import hive

from cdc_dbt.cli import run_sql
from cdc_dbt.serve import ServerAddress
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings
from tests.integration.conftest import DEMO_LANDING, Build, rows_query, table_rows
from tests.kcat import KafkaRecord, write_kcat_file

pytestmark = pytest.mark.slow

VENV_BIN = Path(sys.executable).parent
SCHEMA = "cdc"
CLIENT_PAUSE_SECONDS = 1.0
"""Between a client's queries while a build runs: each answer is two scans in the server's one JVM,
so clients asking five times a second took the CPU the build needed (that test 62 s, 53 s at once a
second, alone: docs/development.md)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    def __init__(self, folder: Path) -> None:
        self.folder, self.landing, self.warehouse = folder, folder / "landing", folder / "warehouse"
        shutil.copytree(DEMO_LANDING, self.landing)
        self.address = ServerAddress("127.0.0.1", free_port())
        self.process = subprocess.Popen(
            [str(VENV_BIN / "cdc-dbt"), "serve"],
            cwd=PACKAGE_PROJECT_DIR,
            env=self.environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # its own process group: what is left of it can be found
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith(f"cdc-dbt serve: listening on 127.0.0.1:{self.address.port} "), line

    def environment(self) -> dict[str, str]:
        environment = {name: value for name, value in os.environ.items() if not name.startswith(("CDC_", "DBT_"))}
        return {
            **environment,
            "CDC_LANDING_DIR": str(self.landing),
            "CDC_WAREHOUSE_DIR": str(self.warehouse),
            "CDC_SERVER_PORT": str(self.address.port),
            "CDC_SHUFFLE_PARTITIONS": os.environ["CDC_SHUFFLE_PARTITIONS"],
        }

    def run(self, *command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(command), cwd=PACKAGE_PROJECT_DIR, env=self.environment(), capture_output=True, text=True, timeout=900
        )

    def query(self, sql: str) -> list[tuple[object, ...]]:
        with hive.connect(host=self.address.host, port=self.address.port) as connection:
            cursor = connection.cursor()
            cursor.execute(sql)
            return list(cursor.fetchall())

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=120)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = Server(tmp_path_factory.mktemp("warm-server"))
    yield started
    if started.process.poll() is None:
        started.stop()


@pytest.fixture(scope="module")
def built_with_plain_dbt(server: Server) -> subprocess.CompletedProcess[str]:
    # The stock dbt CLI of the venv: no cdc-dbt, no JVM in this process. The unit tests too: they
    # use temporary views of the server's one session.
    return server.run(
        str(VENV_BIN / "dbt"), "build", "--target", "thrift",
        "--resource-type", "model", "--resource-type", "unit_test", "--vars", "{example_marts: true}",
        "--project-dir", ".", "--profiles-dir", ".",
        "--target-path", str(server.folder / "target"),
    )  # fmt: skip


def test_plain_dbt_through_the_server_builds_the_tables_of_the_in_process_build(
    server: Server, built_with_plain_dbt: subprocess.CompletedProcess[str], demo_build: Build
) -> None:
    assert built_with_plain_dbt.returncode == 0, built_with_plain_dbt.stdout[-3000:]
    manifest = json.loads((server.folder / "target" / "manifest.json").read_text())
    tables = {
        node["alias"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["original_file_path"].startswith("models/marts/")
    }
    assert {"cdc_current", "cdc_history", "customers_current", "reviews_history"} <= tables
    through_server = table_rows(
        [{"table_name": name, "row_json": row} for name, row in server.query(rows_query(SCHEMA, tables))]
    )
    in_process = table_rows(demo_build.rows(rows_query("{schema}", tables)))
    differing = {table for table in tables if through_server.get(table) != in_process.get(table)}
    assert not differing, f"tables differ: {sorted(differing)}"


def test_a_hiveserver2_client_reads_a_typed_mart_with_its_types(
    server: Server, built_with_plain_dbt: subprocess.CompletedProcess[str]
) -> None:
    with hive.connect(host=server.address.host, port=server.address.port) as connection:
        cursor = connection.cursor()
        cursor.execute("select customer_id, email, updated_at from cdc.customers_current order by customer_id")
        types = [column[1] for column in cursor.description]
        rows = cursor.fetchall()
    assert types == ["INT_TYPE", "STRING_TYPE", "TIMESTAMP_TYPE"]
    assert rows and all(isinstance(customer_id, int) for customer_id, *_ in rows)


def test_cdc_dbt_sql_goes_through_the_server_and_prints_what_the_session_prints(
    server: Server,
    built_with_plain_dbt: subprocess.CompletedProcess[str],
    demo_build: Build,
    capsys: pytest.CaptureFixture[str],
) -> None:
    query = "select * from {schema}.employees_history order by row_key, version"
    through_server = server.run(str(VENV_BIN / "cdc-dbt"), "sql", query.format(schema=SCHEMA))
    assert through_server.returncode == 0, through_server.stderr
    assert (
        through_server.stderr
        == f"cdc-dbt: through the warm server at 127.0.0.1:{server.address.port} (cdc-dbt serve)\n"
    )
    assert run_sql(Settings(PACKAGE_PROJECT_DIR, DEMO_LANDING, server.folder, None), query.format(schema="demo")) == 0
    assert through_server.stdout == capsys.readouterr().out != ""
    failed = server.run(str(VENV_BIN / "cdc-dbt"), "sql", "select * from cdc.no_such_table")
    assert failed.returncode == 1
    assert failed.stderr.splitlines()[-1].startswith("cdc-dbt sql: [TABLE_OR_VIEW_NOT_FOUND] The table or view")


def test_dbt_commands_of_cdc_dbt_run_in_the_server_and_print_what_they_print_without_it(
    server: Server, built_with_plain_dbt: subprocess.CompletedProcess[str], tmp_path: Path
) -> None:
    listing = [str(VENV_BIN / "cdc-dbt"), "ls", "--select", "+cdc_current", "--output", "name", "--quiet"]
    through_server = server.run(*listing)
    assert through_server.returncode == 0, through_server.stdout[-3000:] + through_server.stderr
    assert (
        through_server.stderr
        == f"cdc-dbt: through the warm server at 127.0.0.1:{server.address.port} (cdc-dbt serve)\n"
    )
    # The same command on a warehouse no server holds runs here (ls needs no JVM).
    without_server = subprocess.run(
        listing,
        cwd=PACKAGE_PROJECT_DIR,
        env={**server.environment(), "CDC_WAREHOUSE_DIR": str(tmp_path / "no-server")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert without_server.returncode == 0 and without_server.stderr == "", without_server.stderr
    assert through_server.stdout == without_server.stdout
    assert "cdc_current" in through_server.stdout.split()

    shown = server.run(
        str(VENV_BIN / "cdc-dbt"), "show", "--inline", "select count(*) as live_rows from cdc.cdc_current",
        "--output", "json", "--quiet",
    )  # fmt: skip
    assert shown.returncode == 0, shown.stdout[-3000:] + shown.stderr
    [count] = server.query("select count(*) from cdc.cdc_current")[0]
    assert json.loads(shown.stdout)["show"] == [{"live_rows": count}]

    # A model's show runs the model's query alone, not those of the tests attached to it (dbt's
    # debug events say which nodes it ran).
    shown_model = server.run(
        str(VENV_BIN / "cdc-dbt"), "show", "--select", "cdc_current", "--limit", "2",
        "--log-format", "json", "--log-level", "debug",
        "--target-path", str(tmp_path / "target-show"),
    )  # fmt: skip
    assert shown_model.returncode == 0, shown_model.stdout[-3000:] + shown_model.stderr
    events = [json.loads(line) for line in shown_model.stdout.splitlines() if line.startswith("{")]
    started = [event["data"]["node_info"]["unique_id"] for event in events if event["info"]["name"] == "NodeStart"]
    assert started == ["model.cdc_dbt.cdc_current"]

    failing = server.run(str(VENV_BIN / "cdc-dbt"), "show", "--inline", "select * from cdc.no_such_table", "--quiet")
    assert failing.returncode == 1
    assert "TABLE_OR_VIEW_NOT_FOUND" in failing.stdout


def test_source_freshness_through_the_server_says_stale_landings_and_fails_past_the_error_threshold(
    server: Server, built_with_plain_dbt: subprocess.CompletedProcess[str]
) -> None:
    freshness = [str(VENV_BIN / "cdc-dbt"), "source", "freshness", "--target-path", str(server.folder / "target-fresh")]
    # By default an error after 72 hours: the demo's records were written to Kafka in 2024.
    stale = server.run(*freshness)
    assert stale.returncode == 1, stale.stdout[-3000:]
    assert "ERROR STALE freshness of landing.landed_record_times" in stale.stdout
    # Thresholds as vars: a warning, and the command succeeds.
    thresholds = '{"landing_warn_after_hours": 1, "landing_error_after_hours": 1000000}'
    warned = server.run(*freshness, "--vars", thresholds)
    assert warned.returncode == 0, warned.stdout[-3000:]
    assert "WARN freshness of landing.landed_record_times" in warned.stdout


def test_clients_querying_during_a_build_see_each_table_before_or_after_it(
    server: Server, built_with_plain_dbt: subprocess.CompletedProcess[str]
) -> None:
    counts = "select (select count(*) from cdc.cdc_current), (select count(*) from cdc.customers_current)"
    before = server.query(counts)[0]
    new_customers = [
        KafkaRecord(
            "dbserver1.inventory.customers", 7, offset, json.dumps({"id": 9000 + offset}),
            json.dumps({
                "before": None, "op": "c", "ts_ms": 1709539300000,
                "after": {"id": 9000 + offset, "first_name": "New", "last_name": "Customer", "email": None,
                          "updated_at": 1709539300000000},
                "source": {"connector": "postgresql", "db": "inventory_db", "schema": "inventory",
                           "table": "customers", "lsn": 200000000 + offset, "ts_ms": 1709539300000},
            }),
        )
        for offset in range(5)
    ]  # fmt: skip
    write_kcat_file(server.landing / "new-customers.json", new_customers)

    answers: list[tuple[object, ...]] = []
    errors: list[str] = []
    building = threading.Event()
    building.set()

    def keep_querying() -> None:
        while building.is_set():
            try:
                answers.append(server.query(counts)[0])
            except Exception as error:  # noqa: BLE001 - every failure is the finding
                # Whole enough to name a server-side class: a session close once failed with a
                # NoClassDefFoundError whose class a shorter excerpt cut off.
                errors.append(str(error)[:3000])
            time.sleep(CLIENT_PAUSE_SECONDS)

    clients = [threading.Thread(target=keep_querying) for _ in range(2)]
    for client in clients:
        client.start()
    try:
        build = server.run(*incremental_run(server))
    finally:
        building.clear()
        for client in clients:
            client.join()
    assert build.returncode == 0, build.stdout[-3000:]
    assert "through the warm server" in build.stderr, "the build ran in the server's process"
    after = server.query(counts)[0]
    assert after == (before[0] + 5, before[1] + 5)
    assert not errors, errors[:3]
    assert len(answers) >= 4, "the clients were answered while the build ran"
    # Each read of a table sees it before or after a write; two reads in one statement may
    # straddle one (each subquery lists its table's files when it runs).
    for table, (count_before, count_after) in enumerate(zip(before, after, strict=True)):
        seen = {answer[table] for answer in answers}
        assert seen <= {count_before, count_after}, f"table {table}: {seen}, not only {count_before}, {count_after}"


def incremental_run(server: Server) -> list[str]:
    """The models of the two tables the clients read: what a build writes under them."""
    return [
        str(VENV_BIN / "cdc-dbt"), "run", "--vars", "{example_marts: true}",
        "--select", "+cdc_current +customers_current",
        "--target-path", str(server.folder / "target-incremental"),
    ]  # fmt: skip


def test_the_same_run_with_nothing_new_is_answered_at_once_and_a_written_statement_makes_it_run(
    server: Server, built_with_plain_dbt: subprocess.CompletedProcess[str]
) -> None:
    """After the clients' test's run: nothing landed since, so the same command does nothing and
    says so; once a statement dropped one of its views, the same command runs and brings it back."""
    again = server.run(*incremental_run(server))
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr
    assert again.stdout.startswith("cdc-dbt: nothing to run: no landed file, project file or table changed")
    assert len(again.stdout.splitlines()) == 1, "no model ran"

    dropped = server.run(str(VENV_BIN / "cdc-dbt"), "sql", "drop view cdc.customers_current")
    assert dropped.returncode == 0, dropped.stderr
    rebuilt = server.run(*incremental_run(server))
    assert rebuilt.returncode == 0, rebuilt.stdout[-3000:] + rebuilt.stderr
    assert "nothing to run" not in rebuilt.stdout
    assert server.query("select count(*) > 0 from cdc.customers_current") == [(True,)]


def process_group_alive(group_id: int) -> bool:
    try:
        os.killpg(group_id, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_stops_the_server_and_everything_it_started(server: Server) -> None:
    assert server.stop() == 0
    # No process of its group is left: no JVM, no Python worker. The server waits for its JVM;
    # the JVM's Python workers end when it does, each on its own, within moments.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and process_group_alive(server.process.pid):
        time.sleep(0.2)
    assert not process_group_alive(server.process.pid), "a process the server started outlived it"
    assert not (server.warehouse / "cdc-dbt-server.json").exists()
