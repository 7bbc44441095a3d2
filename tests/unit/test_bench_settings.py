"""bench/spark_settings.py measures, by default, what the suite's Spark settings added last gained:
its base and its added settings together must be the suite's own session's settings
(tests/integration/conftest.py). Both files are read as text: nothing is imported, no JVM starts."""

import ast
from pathlib import Path
from typing import Any

from cdc_dbt.settings import PACKAGE_PROJECT_DIR


def assigned_literals(path: Path) -> dict[str, Any]:
    """Each module-level `NAME = <literal>` of the file at `path`."""
    literals = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                literals[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return literals


def test_the_benchmark_s_base_and_added_settings_are_the_suite_s_session() -> None:
    suite = assigned_literals(PACKAGE_PROJECT_DIR / "tests" / "integration" / "conftest.py")
    bench = assigned_literals(PACKAGE_PROJECT_DIR / "bench" / "spark_settings.py")
    suite_session = {**suite["SMALL_INPUT_SPARK_CONF"], **suite["SUITE_SESSION_JVM"]}
    assert {**bench["SUITE_BASE"], **bench["SUITE_ADDED"]} == suite_session
    assert not bench["SUITE_BASE"].keys() & bench["SUITE_ADDED"].keys()
