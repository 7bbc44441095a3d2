"""Fixtures the unit and integration tests share, and the groups of pytest-xdist's workers. The real
parts here start on first use, once per pytest process (each worker is one)."""

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


SHARED_BUILD_FIXTURES = {"demo_build": "demo", "combined_build": "combined"}
"""Builds of the session that several modules read, and the group of their modules."""
REAL_PARTS_FIXTURES = frozenset({"kafka_broker", "schema_registry_server"})


def worker_group(module_fixtures: set[str], module_name: str) -> str:
    """The pytest-xdist group of a test module: every module using a shared build (the demo's, the
    corpus') on one worker, so that it is built once; the modules of the session's real parts (a
    broker, a registry) on one worker, so that each starts once more at most; any other module on
    its own."""
    for fixture, group in SHARED_BUILD_FIXTURES.items():
        if fixture in module_fixtures:
            return group
    if module_fixtures & REAL_PARTS_FIXTURES:
        return "real-parts"
    return module_name


def group_weight(items: list[pytest.Item]) -> tuple[int, int, int]:
    """Longest first, as a scheduler of few workers wants: the whole-system tests (`slow`), then the
    Spark tests, then the rest; the unit tests' modules, seconds each, fill the end of the run."""
    slow = sum(item.get_closest_marker("slow") is not None for item in items)
    spark = sum(item.get_closest_marker("spark") is not None or "spark" in item.fixturenames for item in items)
    return slow, spark, len(items)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's hook reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (./scripts/test.sh's workers): each test module's group
    (worker_group), and the groups in the order of their weight (group_weight)."""
    # The controller sees `dist`; a worker, which collects the tests, sees it as "no" and
    # `loadgroup` set instead.
    if not (getattr(config.option, "loadgroup", False) or getattr(config.option, "dist", "no") == "loadgroup"):
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        module = getattr(item, "module", None)  # a test function's; any other item is grouped by its file
        modules.setdefault(module.__name__ if module else item.nodeid.split("::")[0], []).append(item)
    groups: dict[str, list[pytest.Item]] = {}
    for module_name, module_items in modules.items():
        fixtures = {name for item in module_items for name in item.fixturenames}
        group = worker_group(fixtures, module_name)
        for item in module_items:
            item.add_marker(pytest.mark.xdist_group(group))
        groups.setdefault(group, []).extend(module_items)
    items[:] = [item for group in sorted(groups.values(), key=group_weight, reverse=True) for item in group]


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
