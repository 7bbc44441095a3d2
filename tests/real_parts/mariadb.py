"""A private MariaDB 10.11 server for tests, writing a row-based binlog so Debezium can stream from it.

The server is Debian's (`mariadb-server`: /usr/sbin/mariadbd, /usr/bin/mariadb-install-db, and the
`mariadb` and `mariadb-admin` clients of `mariadb-client`). Each server lives in the test's folder:
one option file (`my.cnf`, the only one any of the programs reads: `--defaults-file`), data, binlog,
error log and the unix socket, on a free 127.0.0.1 port. `root` has no password, over the socket
and over TCP; `DEBEZIUM_USER` has a password and the privileges Debezium's binlog connectors ask for.
Statements run through the `mariadb` client, so the tests need no Python driver.

mariadbd refuses to run as root unless told so with `--user=root` (its guard, unlike PostgreSQL's,
can be lifted), and tests and CI here run as root. As root, the option file therefore says
`user=root`: the server runs as the caller, its files stay owned by the caller and sit in any folder
the caller can write, and no user namespace or chown is needed. Run as another user, the option is
left out and the server runs as that user.

    with start_mariadb(folder) as mariadb:
        mariadb.create_database("shop")
        mariadb.execute("create table t (id int primary key)", database="shop")
"""

import contextlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.real_parts.processes import free_port, stop_process, wait_until
from tests.real_parts.server import Server, fail_if_exited, start_server, stopped_on_failure

MARIADB_SERVER = os.environ.get("CDC_TEST_MARIADBD", "/usr/sbin/mariadbd")
MARIADB_INSTALL_DB = "mariadb-install-db"
MARIADB_CLIENT = "mariadb"
MARIADB_ADMIN = "mariadb-admin"
SUPERUSER = "root"
DEBEZIUM_USER = "debezium"
DEBEZIUM_PASSWORD = "debezium"
DEBEZIUM_PRIVILEGES = "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES"
"""What Debezium's MySQL and MariaDB connectors document: reading tables (SELECT), the snapshot's
FLUSH and table locks (RELOAD, LOCK TABLES), listing databases, reading the binlog as a replica
(REPLICATION SLAVE) and its position (REPLICATION CLIENT, MariaDB's BINLOG MONITOR)."""
MYSQL_CONNECTOR_VERSION = "5.7.44-mariadb-10.11"
"""The version a server started for Debezium's MySQL connector reports (`server_version`): that
connector reads the binlog position with MySQL 8.4's `SHOW BINARY LOG STATUS`, which MariaDB 10.11
lacks, and then falls back to `SHOW MASTER STATUS` only for a `SELECT VERSION()` below 8.4: `10.11.19`
it refuses."""
START_TIMEOUT_SECONDS = 60
SOCKET_NAME = "mariadb.sock"
SOCKET_PATH_LIMIT = 100
"""A unix socket's path must fit in 107 bytes."""
SERVER_SETTINGS = {
    "bind_address": "127.0.0.1",
    "skip_name_resolve": "ON",  # grants by address: 127.0.0.1 is not looked up as `localhost`
    # What a binlog reader needs: every change as a row event with all its columns.
    "log_bin": "binlog",
    "binlog_format": "ROW",
    "binlog_row_image": "FULL",
    "server_id": "1",
    "character_set_server": "utf8mb4",  # 10.11's default is latin1: no emoji
    "collation_server": "utf8mb4_unicode_ci",
    "default_time_zone": "+00:00",  # TIMESTAMP columns read the same on every machine
    # A test server's data need not survive a machine crash: no waiting on the disk, little memory.
    "innodb_flush_log_at_trx_commit": "0",
    "sync_binlog": "0",
    "innodb_doublewrite": "OFF",
    "innodb_use_native_aio": "OFF",  # io_uring and libaio may be forbidden in a container
    "innodb_buffer_pool_size": "32M",
    "innodb_log_file_size": "8M",  # mariadb-install-db's 96 MB would cost a resize at each start
    "performance_schema": "OFF",
    "max_connections": "40",
}


@dataclass
class MariaDB(Server):
    """A running server; `stop()` (or leaving the `with` block) shuts it down."""

    folder: Path
    data: Path
    socket: Path
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    options: Path
    host: str = "127.0.0.1"
    user: str = DEBEZIUM_USER
    password: str = DEBEZIUM_PASSWORD

    @property
    def pid(self) -> int:
        return self.process.pid

    def execute(self, sql: str, database: str | None = None) -> str:
        """Run `sql` (any number of statements, `;`-separated, autocommitted unless in a transaction)
        through the `mariadb` client as root over the unix socket; what it printed, in batch form: a
        line a row, columns split by tabs, no header, NULL as `NULL`, and tab, newline and backslash
        in values escaped as `\\t`, `\\n`, `\\\\`. The first failing statement raises with its message."""
        command = [MARIADB_CLIENT, f"--defaults-file={self.options}", "--batch", "--skip-column-names"]
        if database is not None:
            command.append(f"--database={database}")
        done = subprocess.run(command, input=sql, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"mariadb failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def rows(self, query: str, database: str | None = None) -> list[list[str]]:
        """The rows a query returns, each a list of its columns as the client prints them (see `execute`)."""
        return [line.split("\t") for line in self.execute(query, database).splitlines()]

    def create_database(self, name: str) -> None:
        self.execute(f"create database `{name}`")

    def stop(self) -> None:
        """`mariadb-admin shutdown` (it waits until the server has stopped); if the server (by PID)
        still runs after that, SIGTERM (also a clean shutdown), then SIGKILL."""
        if self.process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run(
                    [MARIADB_ADMIN, f"--defaults-file={self.options}", "--connect-timeout=5", "shutdown"],
                    capture_output=True, timeout=60,
                )  # fmt: skip
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=30)
            stop_process(self.process)
        if self.socket.parent != self.folder:
            shutil.rmtree(self.socket.parent, ignore_errors=True)


def start_mariadb(folder: Path, timeout: float = START_TIMEOUT_SECONDS, server_version: str | None = None) -> MariaDB:
    """mariadb-install-db a server into `folder`/data and start it; returns once it accepts
    connections, with `DEBEZIUM_USER` made. `server_version` replaces the version string the server
    reports (`SELECT VERSION()` and the handshake a client reads), e.g. for a client that checks it."""
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    data, log, options = folder / "data", folder / "mariadb.err", folder / "my.cnf"
    port = free_port()
    socket = socket_folder(folder) / SOCKET_NAME
    settings = {
        **SERVER_SETTINGS,
        "datadir": str(data),
        "port": str(port),
        "socket": str(socket),
        "pid_file": str(folder / "mariadb.pid"),
        "log_error": str(log),
    }
    if os.geteuid() == 0:
        settings["user"] = SUPERUSER  # mariadbd's explicit consent to run as root
    if server_version is not None:
        settings["version"] = server_version
    options.write_text(option_file(settings, socket))
    install_db(options, folder / "install-db.log")
    process = start_server([MARIADB_SERVER, f"--defaults-file={options}"], folder, folder / "mariadbd.out")
    mariadb = MariaDB(folder, data, socket, port, process, log, options)
    with stopped_on_failure(mariadb):
        wait_until(lambda: server_ready(mariadb), timeout, f"MariaDB on port {port}", log)
        mariadb.execute(
            f"create user '{DEBEZIUM_USER}'@'%' identified by '{DEBEZIUM_PASSWORD}';\n"
            f"grant {DEBEZIUM_PRIVILEGES} on *.* to '{DEBEZIUM_USER}'@'%';\n"
        )
    return mariadb


def option_file(settings: dict[str, str], socket: Path) -> str:
    """The server's settings, and the clients' (root over the unix socket, in utf8mb4)."""
    client = {"socket": str(socket), "user": SUPERUSER, "default_character_set": "utf8mb4"}
    return (
        "# cdc-dbt tests\n[mariadbd]\n"
        + "".join(f"{name} = {value}\n" for name, value in settings.items())
        + "\n[client]\n"
        + "".join(f"{name} = {value}\n" for name, value in client.items())
    )


def install_db(options: Path, log: Path) -> None:
    """The system tables, with a password-less `root` (as in MariaDB before 10.4: no unix_socket
    authentication, which would tie root to the OS user root) and no `test` database.
    `--cross-bootstrap` (what Debian's build uses) leaves out the accounts `root@<this host's name>`,
    which `skip_name_resolve` would warn about at each start, and the look-up of that name."""
    if shutil.which(MARIADB_INSTALL_DB) is None:
        raise RuntimeError("MariaDB is missing: apt-get install mariadb-server")
    with log.open("wb") as out:
        subprocess.run(
            [MARIADB_INSTALL_DB, f"--defaults-file={options}", "--auth-root-authentication-method=normal",
             "--skip-test-db", "--cross-bootstrap"],
            check=True, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip


def server_ready(mariadb: MariaDB) -> bool:
    """The server answers `mariadb-admin ping`; fails if it exited."""
    fail_if_exited(mariadb.process, "mariadbd", mariadb.log)
    if not mariadb.socket.exists():  # before that, each ping would only wait to fail
        return False
    ping = [MARIADB_ADMIN, f"--defaults-file={mariadb.options}", "--connect-timeout=2", "--silent", "ping"]
    return subprocess.run(ping, capture_output=True, timeout=30).returncode == 0


def socket_folder(folder: Path) -> Path:
    """`folder` itself, unless its path is too long for a unix socket: then a short new one in /tmp."""
    if len(str(folder / SOCKET_NAME)) <= SOCKET_PATH_LIMIT:
        return folder
    return Path(tempfile.mkdtemp(prefix="cdc-mariadb-"))
