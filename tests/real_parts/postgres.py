"""A private PostgreSQL 15 cluster for tests, with `wal_level=logical` so Debezium can stream from it.

The server is Debian's (`postgresql-15`: /usr/lib/postgresql/15/bin). Each cluster lives in the
test's folder: data, log, and the unix socket, on a free 127.0.0.1 port, trust authentication for
the superuser `postgres`. Statements run through `psql` (Debian's `postgresql-client-15`), so the
tests need no Python driver.

PostgreSQL will not run as root (initdb, postgres and pg_ctl all refuse), and tests and CI here run
as root. As root, each of them therefore runs inside a new user namespace (`unshare --user`) where
this process's uid is mapped to `nobody`'s: PostgreSQL sees itself run by an ordinary user, while
the kernel still acts as the real uid outside it (root). So the cluster's files stay owned by the
caller and sit in any folder the caller can write, even a 0700 pytest temp folder that a dedicated
user could not enter; nothing is added to /etc/passwd and nothing needs chown. Run as a non-root
user, the programs are started directly.

    with start_postgres(folder) as postgres:
        postgres.execute("create table t (id int primary key)")
"""

import contextlib
import grp
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.real_parts.processes import free_port, log_tail, pid_alive, wait_until
from tests.real_parts.server import Server, stopped_on_failure

POSTGRES_BIN = Path(os.environ.get("CDC_TEST_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))
SUPERUSER = "postgres"
START_TIMEOUT_SECONDS = 60
FIELD_SEPARATOR = "\x1f"
"""ASCII's unit separator, between the columns `Postgres.rows` reads."""
SOCKET_PATH_LIMIT = 100
"""A unix socket's path must fit in 107 bytes; `.s.PGSQL.<port>` takes 16 of them."""
SERVER_SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "wal_level": "logical",
    "max_wal_senders": "10",
    "max_replication_slots": "10",
    "timezone": "'UTC'",
    # A test cluster's data need not survive a machine crash: no waiting on the disk.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "32MB",
    "max_connections": "40",
}


@dataclass
class Postgres(Server):
    """A running cluster; `stop()` (or leaving the `with` block) shuts it down."""

    folder: Path
    data: Path
    socket_dir: Path
    port: int
    pid: int
    log: Path
    database: str = SUPERUSER
    user: str = SUPERUSER
    host: str = "127.0.0.1"

    def execute(self, sql: str, database: str | None = None, separator: str = "|") -> str:
        """Run `sql` (any number of statements, each committed on its own) through psql, over the unix
        socket; what it printed, unaligned (`-At`: a line a row, columns split by `separator`). A
        failing statement raises with psql's message."""
        connection = ["-h", str(self.socket_dir), "-p", str(self.port), "-U", self.user]
        options = ["-X", "-q", "-At", "-F", separator, "-v", "ON_ERROR_STOP=1", "-d", database or self.database]
        done = subprocess.run(
            [str(POSTGRES_BIN / "psql"), *connection, *options, "-f", "-"],
            input=sql, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def rows(self, query: str) -> list[list[str]]:
        """The rows a query returns, each a list of its columns as psql prints them (null as ''),
        split on a control character no test value holds. A value with a newline spoils this: cast it."""
        return [line.split(FIELD_SEPARATOR) for line in self.execute(query, separator=FIELD_SEPARATOR).splitlines()]

    def create_database(self, name: str) -> None:
        self.execute(f'create database "{name}"')

    def stop(self) -> None:
        """`pg_ctl stop -m fast` (sessions rolled back, a checkpoint, replication connections closed);
        if the postmaster (by PID) still runs after that, SIGQUIT (immediate stop), then SIGKILL."""
        if not pid_alive(self.pid):
            return
        stop = [str(POSTGRES_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop"]
        subprocess.run(as_cluster_owner(stop), capture_output=True, timeout=60)
        for sig in (signal.SIGQUIT, signal.SIGKILL):
            if not pid_alive(self.pid):
                break
            os.kill(self.pid, sig)
            with contextlib.suppress(TimeoutError):  # then the next, stronger signal
                wait_until(lambda: not pid_alive(self.pid), 10, f"postgres {self.pid} to exit")
        if self.socket_dir != self.folder:
            shutil.rmtree(self.socket_dir, ignore_errors=True)


def start_postgres(folder: Path, database: str = SUPERUSER, timeout: float = START_TIMEOUT_SECONDS) -> Postgres:
    """initdb a cluster in `folder`/data and start it; returns once it accepts connections, with
    `database` created (the default `postgres` always exists)."""
    folder.mkdir(parents=True, exist_ok=True)
    data, log = folder / "data", folder / "postgres.log"
    port = free_port()
    socket_dir = socket_folder(folder, port)
    initdb(data, folder / "initdb.log")
    with (data / "postgresql.conf").open("a") as conf:
        settings = {**SERVER_SETTINGS, "port": str(port), "unix_socket_directories": f"'{socket_dir}'"}
        conf.write("\n# cdc-dbt tests\n" + "".join(f"{name} = {value}\n" for name, value in settings.items()))
    start = [str(POSTGRES_BIN / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", str(int(timeout)), "start"]
    started = subprocess.run(as_cluster_owner(start), capture_output=True, text=True, timeout=timeout + 30)
    pid = postmaster_pid(data)
    if pid is None:  # it never ran: nothing to stop
        raise start_failure(started, log)
    postgres = Postgres(folder, data, socket_dir, port, pid, log)
    with stopped_on_failure(postgres):
        if started.returncode != 0:
            raise start_failure(started, log)
        if database != SUPERUSER:
            postgres.create_database(database)
            postgres.database = database
    return postgres


def start_failure(started: subprocess.CompletedProcess[str], log: Path) -> RuntimeError:
    """What `pg_ctl start` said, and the end of the server's log."""
    return RuntimeError(f"PostgreSQL did not start: {started.stdout}{started.stderr}{log_tail(log)}")


def initdb(data: Path, log: Path) -> None:
    """A new cluster whose superuser `postgres` may connect without a password, locally and over TCP
    (replication connections too: Debezium's), in UTF-8 with C.UTF-8 collation (the same on every machine)."""
    with log.open("wb") as out:
        subprocess.run(
            as_cluster_owner([str(POSTGRES_BIN / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
                              "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"]),
            check=True, stdout=out, stderr=subprocess.STDOUT, timeout=120,
        )  # fmt: skip


def as_cluster_owner(command: list[str]) -> list[str]:
    """`command` as PostgreSQL must run it: as root, inside a user namespace where it is not root."""
    if os.geteuid() != 0:
        return command
    if shutil.which("unshare") is None:
        raise RuntimeError("as root, PostgreSQL runs under `unshare --user` (util-linux), which is missing")
    return ["unshare", "--user", f"--map-user={unprivileged_uid()}", f"--map-group={unprivileged_gid()}", *command]


def unprivileged_uid() -> int:
    """`nobody`: initdb looks its own uid up in /etc/passwd, so the mapped one must be there."""
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return 65534


def unprivileged_gid() -> int:
    for name in ("nogroup", "nobody"):
        try:
            return grp.getgrnam(name).gr_gid
        except KeyError:
            continue
    return 65534


def socket_folder(folder: Path, port: int) -> Path:
    """`folder` itself, unless its path is too long for a unix socket: then a short new one in /tmp."""
    if len(str(folder.resolve() / f".s.PGSQL.{port}")) <= SOCKET_PATH_LIMIT:
        return folder.resolve()
    return Path(tempfile.mkdtemp(prefix="cdc-pg-"))


def postmaster_pid(data: Path) -> int | None:
    """The server's PID, from the first line of postmaster.pid (written once it runs)."""
    try:
        return int((data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
