"""The warm server's command channel (cdc_dbt/command_channel.py): a real Unix socket, a real
CommandChannel, and a plain Python function standing in for dbt.

The client (`run_on_server`) and the server share this test's process, as they never do in use:
a command's output reaches the client over the socket, and the client prints it on this process's
stdout and stderr, which capsys reads.
"""

import io
import json
import os
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dbt_common.events.functions import get_capture_stream

from cdc_dbt.cli import goes_through_a_server
from cdc_dbt.command_channel import (
    DbtCommandRunner,
    client_environment,
    run_on_server,
    start_command_channel,
    stop_command_channel,
)

TIMEOUT = 5.0
"""Seconds any wait may take: a safety net so that a bug fails a test instead of hanging the suite."""

WAITS = "cdc-dbt: the server is running another dbt command; this one waits for it\n"

Serve = Callable[[DbtCommandRunner], str]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Starts a channel running the given command; returns its socket path. Stopped afterwards,
    and this process's environment and working folder put back whatever the channel did to them
    (the server is this process: a bug must not leak into other tests)."""
    channels = []
    environ, cwd = dict(os.environ), os.getcwd()

    def start(run_command: DbtCommandRunner) -> str:
        channel, socket_path = start_command_channel(run_command)
        channels.append((channel, socket_path))
        return str(socket_path)

    try:
        yield start
    finally:
        for channel, socket_path in channels:
            stop_command_channel(channel, socket_path)
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(cwd)


def write_to_dbt_console(text: str) -> None:
    """What dbt's console logger does while the channel captures it."""
    stream = get_capture_stream()
    assert stream is not None, "the channel installs dbt's capture stream for the command"
    stream.write(text)


def send(socket_path: str, request: bytes) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(TIMEOUT)
    connection.connect(socket_path)
    connection.sendall(request)
    return connection


def command_request(args: list[str], cwd: Path, environment: dict[str, str]) -> bytes:
    return json.dumps({"args": args, "cwd": str(cwd), "environment": environment}).encode() + b"\n"


def answers_to(socket_path: str, request: bytes) -> list[dict[str, Any]]:
    """Every answer the server gives to one request, up to its closing the connection."""
    with send(socket_path, request) as connection:
        return [json.loads(line) for line in connection.makefile("rb")]


def returning(status: int) -> DbtCommandRunner:
    return lambda args: status


def recording(ran: list[list[str]]) -> DbtCommandRunner:
    """A command that records its arguments and succeeds."""

    def command(args: list[str]) -> int:
        ran.append(args)
        return 0

    return command


# 1. Output and exit status.


@pytest.mark.parametrize("status", [0, 3])
def test_the_client_prints_what_the_command_writes_to_dbts_console_in_order_and_returns_its_status(
    serve: Serve, capsys: pytest.CaptureFixture[str], status: int
) -> None:
    seen_args: list[list[str]] = []

    def command(args: list[str]) -> int:
        seen_args.append(args)
        for line in ("Running with dbt=1.11\n", "1 of 2 OK created model\n", "2 of 2 OK created model\n"):
            write_to_dbt_console(line)
        write_to_dbt_console("")  # dbt writes empty strings too: they send nothing
        write_to_dbt_console("Done.")
        write_to_dbt_console(" PASS=2\n")
        return status

    socket_path = serve(command)
    assert run_on_server(socket_path, ["build", "--select", "cdc_current"], {}) == status
    printed = capsys.readouterr()
    assert printed.out == "Running with dbt=1.11\n1 of 2 OK created model\n2 of 2 OK created model\nDone. PASS=2\n"
    assert printed.err == ""
    assert seen_args == [["build", "--select", "cdc_current"]]


def test_dbts_capture_stream_is_removed_after_the_command(serve: Serve) -> None:
    socket_path = serve(lambda args: 0 if get_capture_stream() is not None else 9)
    assert run_on_server(socket_path, ["run"], {}) == 0
    assert get_capture_stream() is None, "the server's own dbt logging goes back to its console"


# 2. The client's environment and working folder, and the server's put back.


def test_the_command_sees_the_clients_environment_and_folder_and_none_of_the_servers_dbt_variables(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client_folder = tmp_path / "client"
    client_folder.mkdir()
    monkeypatch.setenv("DBT_SERVER_ONLY", "the server's")
    monkeypatch.setenv("DBT_TARGET", "server-target")
    monkeypatch.chdir(client_folder)  # run_on_server sends its working folder
    seen: dict[str, Any] = {}

    def command(args: list[str]) -> int:
        seen["cwd"] = os.getcwd()
        seen["environ"] = dict(os.environ)
        os.environ["DBT_TARGET_PATH"] = "set by the command"  # as invoke_dbt does
        os.environ["CDC_WAREHOUSE_DIR"] = "set by the command"
        return 0

    environment = {"CDC_LANDING_DIR": str(tmp_path / "landing"), "DBT_TARGET": "local", "DBT_USE_COLORS": "false"}
    server_environ = dict(os.environ)
    socket_path = serve(command)
    assert run_on_server(socket_path, ["build"], environment) == 0
    assert seen["cwd"] == str(client_folder)
    assert {name: seen["environ"].get(name) for name in environment} == environment
    assert "DBT_SERVER_ONLY" not in seen["environ"]
    assert {name for name in seen["environ"] if name.startswith("DBT_")} == {"DBT_TARGET", "DBT_USE_COLORS"}
    assert seen["environ"]["PATH"] == server_environ["PATH"], "the server's other variables stay"
    assert dict(os.environ) == server_environ, "the server's environment is exactly as before"


def test_the_servers_working_folder_is_put_back_after_a_command_in_the_clients(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_folder, client_folder = tmp_path / "server", tmp_path / "client"
    server_folder.mkdir()
    client_folder.mkdir()
    monkeypatch.chdir(server_folder)
    seen_cwd: list[str] = []

    def command(args: list[str]) -> int:
        seen_cwd.append(os.getcwd())
        return 0

    socket_path = serve(command)
    server_environ = dict(os.environ)
    answers = answers_to(socket_path, command_request(["run"], client_folder, {"DBT_TARGET": "local"}))
    assert answers == [{"exit": 0}]
    assert seen_cwd == [str(client_folder)]
    assert os.getcwd() == str(server_folder)
    assert dict(os.environ) == server_environ


def test_a_working_folder_the_server_cannot_enter_fails_the_command_and_changes_nothing(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBT_SERVER_ONLY", "the server's")
    ran: list[list[str]] = []
    socket_path = serve(recording(ran))
    server_environ, server_cwd = dict(os.environ), os.getcwd()
    request = command_request(["build"], tmp_path / "gone", {"CDC_LANDING_DIR": "/client/landing"})
    [error, status] = answers_to(socket_path, request)
    assert status == {"exit": 1} and error["stderr"].startswith("cdc-dbt: ")
    assert ran == []
    assert os.getcwd() == server_cwd
    assert dict(os.environ) == server_environ


# 3. A command that raises.


def test_a_command_that_raises_is_one_line_on_the_clients_stderr_and_status_1(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    def command(args: list[str]) -> int:
        if args == ["build"]:
            write_to_dbt_console("Running with dbt=1.11\n")
            raise RuntimeError("the profile cdc_dbt has no target local")
        return 0

    socket_path = serve(command)
    assert run_on_server(socket_path, ["build"], {}) == 1
    printed = capsys.readouterr()
    assert printed.out == "Running with dbt=1.11\n"
    assert printed.err == "cdc-dbt: the profile cdc_dbt has no target local\n"
    assert get_capture_stream() is None

    assert run_on_server(socket_path, ["ls"], {}) == 0, "the channel serves the next command"
    assert capsys.readouterr().err == "", "and does not make it wait: the failed command let go of its turn"


# 4. Malformed requests.


@pytest.mark.parametrize(
    "request_line",
    [b"not json\n", b"\n", b"[1, 2]\n", b'{"args": ["build"]}\n', b'{"args": null, "cwd": "/", "environment": {}}\n'],
    ids=["not-json", "empty", "not-an-object", "missing-fields", "args-not-a-list"],
)
def test_a_malformed_request_is_answered_with_status_2_and_a_line_and_the_channel_keeps_serving(
    serve: Serve, capsys: pytest.CaptureFixture[str], request_line: bytes
) -> None:
    ran: list[list[str]] = []
    socket_path = serve(recording(ran))
    [error, status] = answers_to(socket_path, request_line)
    assert status == {"exit": 2}
    assert error["stderr"].startswith("cdc-dbt serve: not a command request: ")
    assert error["stderr"].endswith("\n") and error["stderr"].count("\n") == 1
    assert ran == []

    assert run_on_server(socket_path, ["ls"], {}) == 0
    assert ran == [["ls"]]


def test_a_client_that_connects_and_sends_nothing_does_not_stop_the_channel(serve: Serve) -> None:
    socket_path = serve(returning(0))
    send(socket_path, b"").close()
    assert run_on_server(socket_path, ["ls"], {}) == 0


# 5. One command at a time.


class FirstHeldOpen:
    """A command that records when it starts and ends; the one named `first` runs until
    `first_may_end` is set, so that a second can arrive while it runs."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.first_started, self.first_may_end = threading.Event(), threading.Event()

    def __call__(self, args: list[str]) -> int:
        self.events.append(f"start {args[0]}")
        if args[0] == "first":
            self.first_started.set()
            assert self.first_may_end.wait(TIMEOUT)
        self.events.append(f"end {args[0]}")
        return 0


def test_a_second_command_is_told_it_waits_and_runs_only_after_the_first_ends(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    command = FirstHeldOpen()
    events, first_started, first_may_end = command.events, command.first_started, command.first_may_end
    socket_path = serve(command)
    first_status: list[int] = []
    first = threading.Thread(target=lambda: first_status.append(run_on_server(socket_path, ["first"], {})))
    first.start()
    try:
        assert first_started.wait(TIMEOUT)
        with send(socket_path, command_request(["second"], tmp_path, {})) as second:
            answers = (json.loads(line) for line in second.makefile("rb"))
            assert next(answers) == {"stderr": WAITS}
            assert events == ["start first"], "the second waits while the first runs"
            first_may_end.set()
            assert list(answers) == [{"exit": 0}]
    finally:
        first_may_end.set()
        first.join(TIMEOUT)
    assert events == ["start first", "end first", "start second", "end second"]
    assert first_status == [0]
    assert capsys.readouterr().err == "", "the first was not told to wait"


class Stderr(io.StringIO):
    """A client's stderr that tells when the waiting line has been printed."""

    def __init__(self) -> None:
        super().__init__()
        self.told_to_wait = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if WAITS in self.getvalue():
            self.told_to_wait.set()
        return written


def test_the_waiting_line_reaches_the_clients_stderr_and_the_client_then_waits(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = FirstHeldOpen()
    events, first_started, first_may_end = command.events, command.first_started, command.first_may_end
    stderr = Stderr()
    monkeypatch.setattr("sys.stderr", stderr)
    socket_path = serve(command)
    statuses: dict[str, int] = {}
    clients = [
        threading.Thread(target=lambda name=name: statuses.update({name: run_on_server(socket_path, [name], {})}))
        for name in ("first", "second")
    ]
    clients[0].start()
    try:
        assert first_started.wait(TIMEOUT)
        clients[1].start()
        assert stderr.told_to_wait.wait(TIMEOUT)
        assert events == ["start first"], "the second client waits while the first command runs"
    finally:
        first_may_end.set()
        for client in clients:
            client.join(TIMEOUT)
    assert statuses == {"first": 0, "second": 0}
    assert events == ["start first", "end first", "start second", "end second"]
    assert stderr.getvalue() == WAITS, "only the second was told to wait"


# 6. A client that goes away.


def test_a_client_that_disconnects_mid_command_does_not_stop_it_and_the_channel_serves_the_next(
    serve: Serve, tmp_path: Path
) -> None:
    started, may_go_on, finished = threading.Event(), threading.Event(), threading.Event()
    events: list[str] = []

    def command(args: list[str]) -> int:
        events.append(f"start {args[0]}")
        if args[0] == "build":
            started.set()
            assert may_go_on.wait(TIMEOUT)
            for model in range(3):  # writes after the client went away: they go nowhere, and do not fail
                write_to_dbt_console(f"{model + 1} of 3 OK created model\n")
            finished.set()
        events.append(f"end {args[0]}")
        return 0

    socket_path = serve(command)
    with send(socket_path, command_request(["build"], tmp_path, {})):
        assert started.wait(TIMEOUT)
    may_go_on.set()
    assert finished.wait(TIMEOUT), "the command ran to its end"
    assert run_on_server(socket_path, ["ls"], {}) == 0
    assert events == ["start build", "end build", "start ls", "end ls"]


# 7. No server there.


@pytest.mark.parametrize(
    ("socket_left_behind", "error"),
    [(False, "No such file or directory"), (True, "Connection refused")],
    ids=["no socket", "the socket of a killed server"],
)
def test_a_socket_where_nothing_listens_is_status_1_and_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], socket_left_behind: bool, error: str
) -> None:
    with tempfile.TemporaryDirectory(prefix="cdc-dbt-test-") as folder:
        socket_path = str(Path(folder) / "commands.sock")
        if socket_left_behind:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as left_behind:
                left_behind.bind(socket_path)  # the file stays; nothing accepts on it
        assert run_on_server(socket_path, ["build"], {}) == 1
    printed = capsys.readouterr()
    assert printed.out == ""
    assert printed.err == f"cdc-dbt: the warm server's command socket {socket_path}: {error}\n"


def test_a_server_that_stops_before_the_exit_status_is_status_1_and_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with tempfile.TemporaryDirectory(prefix="cdc-dbt-test-") as folder:
        socket_path = str(Path(folder) / "commands.sock")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(socket_path)
            listener.listen(1)

            def answer_then_stop() -> None:
                connection, _ = listener.accept()
                with connection:
                    connection.makefile("rb").readline()
                    connection.sendall(b'{"stdout": "Running with dbt=1.11\\n"}\n')

            server = threading.Thread(target=answer_then_stop)
            server.start()
            status = run_on_server(socket_path, ["build"], {})
            server.join(TIMEOUT)
    assert status == 1
    printed = capsys.readouterr()
    assert printed.out == "Running with dbt=1.11\n"
    assert printed.err == "cdc-dbt: the warm server stopped before the command ended; run it again\n"


# 8. What the client sends.


def test_the_client_environment_keeps_only_dbt_variables_and_the_settings_override(
    capsys: pytest.CaptureFixture[str],  # stdout is not a terminal
) -> None:
    environ = {
        "DBT_TARGET": "local",
        "DBT_PROFILES_DIR": "/home/me/.dbt",
        "CDC_LANDING_DIR": "/from/the/environment",
        "CDC_WAREHOUSE_DIR": "/home/me/warehouse",
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "dbt_lowercase": "not dbt's",
    }
    settings = {"CDC_LANDING_DIR": "/resolved/landing", "CDC_SCHEMA": "cdc", "DBT_TARGET": "from settings"}
    assert client_environment(settings, environ) == {
        "DBT_TARGET": "from settings",
        "DBT_PROFILES_DIR": "/home/me/.dbt",
        "DBT_USE_COLORS": "false",
        "CDC_LANDING_DIR": "/resolved/landing",
        "CDC_SCHEMA": "cdc",
    }


@pytest.mark.parametrize("colours", ["true", "false"])
def test_the_client_environment_keeps_the_clients_own_colour_choice(
    capsys: pytest.CaptureFixture[str], colours: str
) -> None:
    assert client_environment({}, {"DBT_USE_COLORS": colours}) == {"DBT_USE_COLORS": colours}


def test_the_client_environment_does_not_change_the_environ_it_reads() -> None:
    environ = {"DBT_TARGET": "local", "HOME": "/home/me"}
    client_environment({"CDC_SCHEMA": "cdc"}, environ)
    assert environ == {"DBT_TARGET": "local", "HOME": "/home/me"}


# 9. Which commands go through a server.


@pytest.mark.parametrize(
    "args",
    [
        ["build"],
        ["run", "--select", "cdc_current"],
        ["test"],
        ["compile"],
        ["show", "--inline", "select 1"],
        ["ls"],
        ["list"],
        ["parse"],
        ["--warn-error", "build"],
        ["--log-level", "debug", "build"],
        ["--log-format", "json", "--warn-error-options", "{}", "run"],
        ["debug", "--connection"],
    ],
    ids=" ".join,
)
def test_dbt_commands_go_through_a_server(args: list[str]) -> None:
    assert goes_through_a_server(args)


@pytest.mark.parametrize(
    "args",
    [
        ["deps"],
        ["clean"],
        ["debug"],
        ["debug", "--config-dir"],
        ["build", "--help"],
        ["run", "-h"],
        ["debug", "--connection", "--help"],
        ["sql", "select 1"],
        ["serve"],
        ["serve", "--host", "0.0.0.0", "--allow-remote"],
        ["scaffold", "orders"],
    ],
    ids=" ".join,
)
def test_local_commands_and_help_do_not_go_through_a_server(args: list[str]) -> None:
    assert not goes_through_a_server(args)
