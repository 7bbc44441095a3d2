"""What the real parts share: a free loopback port, waiting for a condition, stopping by PID."""

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

STOP_GRACE_SECONDS = 20.0
"""How long a process has to stop on SIGTERM before SIGKILL: a JVM flushes and closes in a few."""


def free_port() -> int:
    """A port nothing on 127.0.0.1 listens on now (the kernel's pick; free until someone binds it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until(condition: Callable[[], bool], timeout: float, what: str, log: Path | None = None) -> None:
    """Poll `condition` until it holds; after `timeout` seconds fail, quoting the end of `log`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not within {timeout:.0f} s{log_tail(log)}")
        time.sleep(0.2)


def log_tail(log: Path | None, lines: int = 15) -> str:
    """The last lines of a log, for an error message (empty when there is none)."""
    if log is None or not log.is_file():
        return ""
    tail = log.read_text(errors="replace").splitlines()[-lines:]
    return f"; the end of {log}:\n" + "\n".join(tail)


def stop_process(process: subprocess.Popen[bytes], grace: float = STOP_GRACE_SECONDS) -> int | None:
    """SIGTERM the process by its PID, SIGKILL it if it has not exited after `grace` seconds, and
    reap it. Its exit code (negative: the signal that ended it), or None if it was already gone."""
    if process.poll() is not None:
        return process.returncode
    for sig, wait_seconds in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.kill(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            return process.wait(timeout=wait_seconds)
        except subprocess.TimeoutExpired:
            continue
    return process.poll()


def pid_alive(pid: int) -> bool:
    """Whether a process (not a zombie) of this PID exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:  # gone in between, or no /proc
        return Path(f"/proc/{pid}").exists()
    return state != "Z"
