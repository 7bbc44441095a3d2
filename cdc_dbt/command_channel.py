"""`cdc-dbt <dbt command>` inside the warm server's process: no JVM, no dbt start, no project parse.

The server (`cdc-dbt serve`) listens on a Unix socket in a folder only its user can open, next to
its HiveServer2 port. A `cdc-dbt` command on the same warehouse sends its arguments, working folder
and settings there; the server runs dbt in its own process, on its own SparkSession (dbt-spark's
`session` method, as `cdc-dbt` runs without a server), and streams dbt's output back line by line,
then the exit status. dbt is already imported there and reparses only what changed, so a command
costs what dbt's work costs. Commands run one at a time (dbt keeps global state per invocation);
SQL clients query the same session meanwhile.

One JSON object per line each way: the request `{"args", "cwd", "environment"}`; the answers
`{"stdout": text}`, `{"stderr": text}`, and last `{"exit": status}`.
"""

import contextlib
import json
import os
import socket
import socketserver
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from io import BufferedIOBase
from pathlib import Path
from typing import Any

SOCKET_NAME = "commands.sock"

DbtCommandRunner = Callable[[list[str]], int]
"""Runs one dbt command (its arguments) in this process, under the environment and working folder
the client sent; returns its exit status."""


# The client side: what `cdc-dbt` runs when a server holds its warehouse.


def client_environment(settings_environment: dict[str, str], environ: dict[str, str]) -> dict[str, str]:
    """What a command's run depends on besides its arguments: cdc-dbt's resolved settings and the
    client's DBT_* variables (dbt reads its flags from them), colours as the client's terminal wants."""
    environment = {name: value for name, value in environ.items() if name.startswith("DBT_")}
    environment.setdefault("DBT_USE_COLORS", "true" if sys.stdout.isatty() else "false")
    return {**environment, **settings_environment}


def run_on_server(socket_path: str, args: list[str], environment: dict[str, str]) -> int:
    """Send one dbt command to the server, print what it prints, return its exit status."""
    request = {"args": args, "cwd": str(Path.cwd()), "environment": environment}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(socket_path)
            connection.sendall(json.dumps(request).encode() + b"\n")
            for line in connection.makefile("r", encoding="utf-8"):
                answer = json.loads(line)
                if "exit" in answer:
                    return int(answer["exit"])
                stream = sys.stderr if "stderr" in answer else sys.stdout
                stream.write(answer.get("stderr") or answer.get("stdout") or "")
                stream.flush()
    except OSError as error:
        print(f"cdc-dbt: the warm server's command socket {socket_path}: {error.strerror or error}", file=sys.stderr)
        return 1
    print("cdc-dbt: the warm server stopped before the command ended; run it again", file=sys.stderr)
    return 1


# The server side.


class ClientOutput:
    """A text stream whose writes go to the client as they happen (dbt's console logger writes here).
    A client that went away (Ctrl-C) stops receiving; the command still runs to its end, so that a
    build is not left half done."""

    def __init__(self, stream: BufferedIOBase) -> None:
        self._stream = stream
        self._lock = threading.Lock()  # dbt logs from several threads
        self.connected = True

    def send(self, answer: dict[str, Any]) -> None:
        with self._lock:
            if not self.connected:
                return
            try:
                self._stream.write(json.dumps(answer).encode() + b"\n")
                self._stream.flush()
            except OSError:
                self.connected = False

    def write(self, text: str) -> int:
        if text:
            self.send({"stdout": text})
        return len(text)

    def flush(self) -> None:
        """Each write is sent at once."""


class CommandChannel(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, socket_path: Path, run_command: DbtCommandRunner) -> None:
        self.run_command = run_command
        self.one_command_at_a_time = threading.Lock()
        super().__init__(str(socket_path), CommandHandler)


class CommandHandler(socketserver.StreamRequestHandler):
    server: CommandChannel

    def handle(self) -> None:
        output = ClientOutput(self.wfile)
        try:
            request = json.loads(self.rfile.readline())
            args, cwd, environment = list(request["args"]), str(request["cwd"]), dict(request["environment"])
        except (ValueError, KeyError, TypeError) as error:
            output.send({"stderr": f"cdc-dbt serve: not a command request: {error}\n"})
            output.send({"exit": 2})
            return
        if not self.server.one_command_at_a_time.acquire(blocking=False):
            output.send({"stderr": "cdc-dbt: the server is running another dbt command; this one waits for it\n"})
            self.server.one_command_at_a_time.acquire()
        try:
            status = run_as_client(self.server.run_command, args, cwd, environment, output)
        finally:
            self.server.one_command_at_a_time.release()
        output.send({"exit": status})


def run_as_client(
    run_command: DbtCommandRunner, args: list[str], cwd: str, environment: dict[str, str], output: ClientOutput
) -> int:
    """`run_command(args)` with the client's environment, working folder and dbt's console output."""
    from dbt_common.events.functions import capture_stdout_logs, stop_capture_stdout_logs

    try:
        with client_context(cwd, environment):
            capture_stdout_logs(output)  # type: ignore[arg-type]  # a text stream in all but name
            try:
                return run_command(args)
            finally:
                stop_capture_stdout_logs()
    except Exception as error:  # noqa: BLE001 - the client gets one line, as from cdc-dbt itself
        output.send({"stderr": f"cdc-dbt: {error}\n"})
        return 1


@contextlib.contextmanager
def client_context(cwd: str, environment: dict[str, str]) -> Iterator[None]:
    """The client's working folder and variables for one command: its DBT_* variables replace the
    server's, its settings override; everything is put back afterwards."""
    saved_environment, saved_cwd = dict(os.environ), os.getcwd()
    try:
        for name in [name for name in os.environ if name.startswith("DBT_")]:
            del os.environ[name]
        os.environ.update(environment)
        os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environment)


def start_command_channel(run_command: DbtCommandRunner) -> tuple[CommandChannel, Path]:
    """Listen for `cdc-dbt` commands on a new socket in a folder only this user can open (mkdtemp
    makes it 0700): the socket is the channel's access control, as the server has no authentication."""
    socket_path = Path(tempfile.mkdtemp(prefix="cdc-dbt-server-")) / SOCKET_NAME
    channel = CommandChannel(socket_path, run_command)
    # Polled every 50 ms for a stop (the default 0.5 s would hold up every stop of the server).
    threading.Thread(
        target=channel.serve_forever, kwargs={"poll_interval": 0.05}, name="cdc-dbt commands", daemon=True
    ).start()
    return channel, socket_path


def stop_command_channel(channel: CommandChannel, socket_path: Path) -> None:
    channel.shutdown()
    channel.server_close()
    socket_path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        socket_path.parent.rmdir()
