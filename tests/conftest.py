"""Fixtures the unit and integration tests share. The real parts here start on first use, once per
session."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.build_times import WORKER_OUTPUT_KEY, add_worker_output, as_worker_output, report_lines
from tests.real_parts.schema_registry import SchemaRegistryServer, start_schema_registry


@pytest.fixture(scope="session")
def schema_registry_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SchemaRegistryServer]:
    """One real Schema Registry (Apicurio, tests/real_parts/schema_registry.py) for the tests that
    need one; a registry that cannot start fails them, it does not skip them."""
    with start_schema_registry(tmp_path_factory.mktemp("schema-registry")) as server:
        yield server


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its in-process builds (tests/build_times.py) to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[WORKER_OUTPUT_KEY] = as_worker_output()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller receives each worker's builds as the worker stops."""
    add_worker_output(getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY, []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Each in-process dbt build of the run, so a slow suite shows which builds and which part."""
    lines = report_lines()
    if lines:
        terminalreporter.section("in-process dbt builds: wall seconds, then seconds summed over nodes")
        for line in lines:
            terminalreporter.write_line(line)
