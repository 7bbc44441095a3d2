"""A real part's server, whichever it is: started as a child with its output in a file, waited for
until it answers (and stopped at once if it never does), and stopped by its PID when the test is
done or its `with` block ends. The primitives under it (ports, waiting, signals) are in
`tests.real_parts.processes`.

    server = SomeServer(..., process=start_server(command, folder, folder / "server.out"))
    with stopped_on_failure(server):
        wait_until(lambda: some_server_ready(server), timeout, "the server on port ...", log)
"""

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

from tests.real_parts.processes import log_tail


class Server:
    """A running server; `stop()` (or leaving the `with` block) ends it by its PID. Each real part
    says how in its own `stop`."""

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def start_server(command: list[str], folder: Path, output: Path) -> subprocess.Popen[bytes]:
    """Start `command` as a child working in `folder`: no input, and all it prints into `output`
    (never the test's console)."""
    with output.open("wb") as out:
        return subprocess.Popen(command, cwd=folder, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


@contextlib.contextmanager
def stopped_on_failure(server: Server) -> Iterator[None]:
    """If the block raises (the server never answered, or setting it up failed), stop the server
    by its PID before the error goes on: a server that failed to start is not left running."""
    try:
        yield
    except BaseException:
        server.stop()
        raise


def fail_if_exited(process: subprocess.Popen[bytes], name: str, *logs: Path) -> None:
    """Raise, quoting the end of each of `logs`, if the server's process has exited: waiting for it
    to answer would only wait out the timeout."""
    if process.poll() is not None:
        raise RuntimeError(f"{name} exited with {process.returncode}{''.join(log_tail(log) for log in logs)}")
