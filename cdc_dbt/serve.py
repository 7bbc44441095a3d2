"""`cdc-dbt serve`: one long-lived SparkSession, the UDFs registered, served as a Spark Thrift
(HiveServer2) endpoint, so that dbt (`--target thrift`), `cdc-dbt sql` and any HiveServer2 client
(beeline, PyHive) run their SQL in it without starting a JVM each; `cdc-dbt`'s dbt commands run
inside the server's own process (cdc_dbt/command_channel.py).

The server holds the warehouse (its embedded metastore admits one process) and says where it
listens in `<warehouse>/cdc-dbt-server.json`: a `cdc-dbt` command on the same warehouse finds it
there and goes through it. Its HiveServer2 port has no authentication: it binds the loopback
address unless told otherwise explicitly.
"""

import argparse
import ipaddress
import json
import os
import re
import signal
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass
from types import FrameType
from typing import TYPE_CHECKING

from cdc_dbt.command_channel import DbtCommandRunner, start_command_channel, stop_command_channel
from cdc_dbt.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_PORT = 10000
STARTUP_SECONDS = 60
SERVER_FILE = "cdc-dbt-server.json"


@dataclass(frozen=True)
class ServerAddress:
    host: str
    port: int
    commands: str | None = None
    """The Unix socket where the server runs `cdc-dbt`'s dbt commands (command_channel.py)."""


def server_port(environ: dict[str, str] | None = None) -> int:
    """CDC_SERVER_PORT, else 10000; a clear error for a value that is no port."""
    value = (os.environ if environ is None else environ).get("CDC_SERVER_PORT") or str(DEFAULT_PORT)
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise ValueError(f"CDC_SERVER_PORT must be a port number (1-65535), got {value!r}")
    return int(value)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def accepts_connections(address: ServerAddress, timeout_seconds: float = 1.0) -> bool:
    try:
        socket.create_connection((address.host, address.port), timeout=timeout_seconds).close()
    except OSError:
        return False
    return True


def running_server(settings: Settings) -> ServerAddress | None:
    """The warm server of this warehouse, when one is running and listening; else None. (A server
    killed without stopping leaves its file behind; nothing listens there then.)"""
    try:
        address = ServerAddress(**json.loads((settings.warehouse_dir / SERVER_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return address if accepts_connections(address) else None


def serve_command(args: list[str], settings: Settings, run_dbt_command: DbtCommandRunner) -> int:
    """`cdc-dbt serve [--host H --allow-remote]`: checks, then the server until it is stopped;
    `run_dbt_command` runs the dbt commands clients send."""
    from cdc_dbt.warehouse_lock import WarehouseInUseError, hold_warehouse

    parser = argparse.ArgumentParser(prog="cdc-dbt serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--allow-remote", action="store_true", help="bind a non-loopback --host: the server has no authentication"
    )
    options = parser.parse_args(args)
    try:
        address = ServerAddress(options.host, server_port())
    except ValueError as error:
        print(f"cdc-dbt serve: {error}", file=sys.stderr)
        return 2
    if not is_loopback(address.host) and not options.allow_remote:
        print(
            f"cdc-dbt serve: {address.host} is not a loopback address and the server has no authentication:"
            " put one in front (docs/operations.md, Security) and pass --allow-remote to bind it",
            file=sys.stderr,
        )
        return 2
    if accepts_connections(address):
        print(f"cdc-dbt serve: {address.host}:{address.port} is in use: set CDC_SERVER_PORT", file=sys.stderr)
        return 2
    try:
        _lock = hold_warehouse(settings.warehouse_dir, "serve")  # held until this process ends
    except WarehouseInUseError as error:
        print(f"cdc-dbt serve: {error}", file=sys.stderr)
        return 3
    return serve(settings, address, run_dbt_command)


def serve(settings: Settings, address: ServerAddress, run_dbt_command: DbtCommandRunner) -> int:
    """Run the server until SIGTERM or Ctrl-C; the caller holds the warehouse lock."""
    from cdc_dbt.recovery import remove_orphaned_table_folders
    from cdc_dbt.session import build_session

    stop = threading.Event()

    def request_stop(signal_number: int, frame: FrameType | None) -> None:
        stop.set()

    spark = build_session(
        settings,
        {
            # One session for every client: the UDFs registered here, and the temporary views
            # and settings a client makes, are seen by every connection.
            "spark.sql.hive.thriftServer.singleSession": "true",
            "spark.hadoop.hive.server2.thrift.bind.host": address.host,
            "spark.hadoop.hive.server2.thrift.port": str(address.port),
        },
    )
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, request_stop)  # after the session: PySpark installs its own
    remove_orphaned_table_folders(spark, settings.schema)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    thrift_server = jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2
    server = thrift_server.startWithSparkSession(spark._jsparkSession, False)
    # The server starts listening on a thread of its own: say so only once it does.
    deadline = time.monotonic() + STARTUP_SECONDS
    while not accepts_connections(address) and time.monotonic() < deadline and not stop.is_set():
        time.sleep(0.2)
    if not accepts_connections(address):
        server.stop()
        stop_jvm(spark)
        print(f"cdc-dbt serve: the server did not listen on {address.host}:{address.port}", file=sys.stderr)
        return 1
    channel, command_socket = start_command_channel(run_dbt_command)
    server_file = settings.warehouse_dir / SERVER_FILE
    server_file.write_text(json.dumps(asdict(ServerAddress(address.host, address.port, str(command_socket)))))
    print(
        f"cdc-dbt serve: listening on {address.host}:{address.port} (HiveServer2, no authentication),"
        f" warehouse {settings.warehouse_dir}; stop with Ctrl-C or SIGTERM",
        flush=True,
    )
    try:
        stop.wait()
    finally:
        server_file.unlink(missing_ok=True)
        stop_command_channel(channel, command_socket)
        server.stop()
        stop_jvm(spark)
    print("cdc-dbt serve: stopped", file=sys.stderr, flush=True)
    return 0


def stop_jvm(spark: "SparkSession") -> None:
    """Stop the session, then the JVM, and wait for it: it would otherwise outlive this process for
    a moment (it exits when its stdin, a pipe from here, closes), and its Python workers with it."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    spark.stop()
    jvm_process = getattr(gateway, "proc", None)
    if gateway is not None:
        gateway.shutdown()
    if jvm_process is not None:
        if jvm_process.stdin is not None:
            jvm_process.stdin.close()
        jvm_process.wait(timeout=60)


def run_sql_on_server(address: ServerAddress, query: str) -> int:
    """`cdc-dbt sql` through the warm server: the rows as one JSON object per line, as in-process."""
    from pyhive import hive  # type: ignore[import-untyped]  # PyHive ships no type information

    from cdc_dbt.json_lines import from_server_value, write_json_lines

    try:
        with hive.connect(host=address.host, port=address.port) as connection:
            cursor = connection.cursor()
            cursor.execute(query)
            columns = [(name.rsplit(".", 1)[-1], type_name) for name, type_name, *_ in cursor.description or []]
            rows = cursor.fetchall()
    except Exception as error:  # noqa: BLE001 - Spark's errors come back as PyHive's, one line said
        print(f"cdc-dbt sql: {server_error_line(error)}", file=sys.stderr)
        return 1
    write_json_lines(
        {name: from_server_value(type_name, value) for (name, type_name), value in zip(columns, values, strict=True)}
        for values in rows
    )
    return 0


def server_error_line(error: Exception) -> str:
    """The first line of Spark's message inside a PyHive error, as the in-process session says it:
    `[TABLE_OR_VIEW_NOT_FOUND] The table or view ...`, without the server's wrapping."""
    status = getattr(getattr(error, "args", [None])[0], "status", None)
    message = (getattr(status, "errorMessage", None) or str(error)).strip()
    first_line = message.splitlines()[0] if message else type(error).__name__
    return SERVER_ERROR_WRAPPING.sub("", first_line)


SERVER_ERROR_WRAPPING = re.compile(r"^Error running query: (\[[\w.]+\] )?[\w.$]+(Exception|Error): ")
