"""The JVM's stderr is forwarded to the user's but for the warning every JVM Spark starts prints
(cdc_dbt.session.jvm_start_warnings_left_out). A shell process stands in for the JVM: it inherits
the file descriptor the same way, and may write to it after the block, as the JVM does."""

import os
import subprocess
import time

import pytest

from cdc_dbt.session import JVM_START_WARNINGS, jvm_start_warnings_left_out

WARNING = JVM_START_WARNINGS[0]


def stderr_once_it_holds(capfd: pytest.CaptureFixture[str], text: str, timeout: float = 5.0) -> str:
    """What reached stderr, read until `text` is in it (a thread forwards the lines)."""
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen and time.monotonic() < deadline:
        seen += capfd.readouterr().err
        time.sleep(0.02)
    return seen


def test_the_start_warning_is_left_out_and_every_other_line_reaches_stderr_also_after_the_block(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with jvm_start_warnings_left_out():
        jvm = subprocess.Popen(["sh", "-c", f"echo '{WARNING}' >&2; echo 'started' >&2; sleep 0.3; echo 'later' >&2"])
    jvm.wait(timeout=10)
    assert stderr_once_it_holds(capfd, "later") == "started\nlater\n"


def test_what_a_jvm_said_before_failing_to_start_is_on_stderr_when_the_error_is_raised(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(RuntimeError, match="did not start"), jvm_start_warnings_left_out():
        subprocess.run(["sh", "-c", f"echo '{WARNING}' >&2; echo 'Error: UnsupportedClassVersionError' >&2"])
        raise RuntimeError("the Java gateway did not start")
    assert capfd.readouterr().err == "Error: UnsupportedClassVersionError\n"


def open_file_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_once_the_jvm_has_ended_the_forwarder_leaves_no_file_descriptor_open(
    capfd: pytest.CaptureFixture[str],
) -> None:
    before = open_file_descriptors()
    with jvm_start_warnings_left_out():
        subprocess.run(["sh", "-c", "echo 'done' >&2"])
    assert stderr_once_it_holds(capfd, "done") == "done\n"
    deadline = time.monotonic() + 5
    while open_file_descriptors() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert open_file_descriptors() == before
