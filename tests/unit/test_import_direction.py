"""The project's Python imports flow one way: bench → generator → cdc_dbt → udfs (tests may
import anything).

So the runtime (udfs and cdc_dbt: the command, the session, the settings) never imports the data
generator, `generator`, which lives in the checkout beside bench/ and tests/, outside the wheel;
and the generator's modules import each other without a cycle. Read from the source with `ast`:
nothing is imported.
"""

import ast
import graphlib
from pathlib import Path

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

LAYERS = ("udfs", "cdc_dbt", "generator", "bench")
"""Lowest first: a package imports only from itself and those before it."""
GENERATOR = "generator"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_PROJECT_DIR).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_imports() -> dict[str, set[str]]:
    """Each module of the layers → the project modules it imports (absolute imports only).

    `from a import b` counts as importing `a.b` when that is a module, else `a`.
    """
    project = {*LAYERS, "tests"}
    imported: dict[str, set[str]] = {}
    for layer in LAYERS:
        for path in sorted((PACKAGE_PROJECT_DIR / layer).rglob("*.py")):
            names = imported.setdefault(_module_name(path), set())
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names.update(f"{node.module}.{alias.name}" for alias in node.names)
                elif isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
    modules = set(imported)

    def module_of(name: str) -> str:
        return name if name in modules or "." not in name else module_of(name.rsplit(".", 1)[0])

    return {
        module: {module_of(name) for name in names if name.split(".")[0] in project}
        for module, names in imported.items()
    }


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_imports_flow_from_bench_to_generator_to_cdc_dbt_to_udfs() -> None:
    upward = [
        (module, imported)
        for module, imports in _project_imports().items()
        for imported in imports
        if imported.split(".")[0] not in LAYERS[: LAYERS.index(module.split(".")[0]) + 1]
    ]
    assert upward == []


def test_the_runtime_never_imports_the_generator() -> None:
    graph = _project_imports()
    assert any(_in(module, GENERATOR) for module in graph)
    runtime = {m: imports for m, imports in graph.items() if _in(m, "udfs") or _in(m, "cdc_dbt")}
    assert [(module, name) for module, imports in runtime.items() for name in imports if _in(name, GENERATOR)] == []


def test_the_generator_modules_have_no_cycle() -> None:
    graph = _project_imports()
    generator = {
        module: {name for name in imports if _in(name, GENERATOR)}
        for module, imports in graph.items()
        if _in(module, GENERATOR)
    }
    graphlib.TopologicalSorter(generator).prepare()  # raises CycleError on a cycle
