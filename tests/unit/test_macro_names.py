"""The naming rule of the project's macros (docs/development.md, "Names"), read from the files.

- `cdc_<name>`: plumbing. Models, tests, hooks, the scaffold's marts, users' projects and the
  authors of a policy override call it; it does not dispatch.
- `<name>` without a prefix: a policy hook a user may override. It only dispatches,
  `adapter.dispatch('<name>', 'cdc_dbt')`, to `default__<name>` beside it (and `spark__<name>`
  where Spark differs).
- `_<name>` (never `_cdc_`): a private helper, as dbt-utils' `_is_relation`. Only this package's
  macros call it.
- A generic test is named after what it asserts, in macros/generic_tests/.

Each file is named after its one macro, and holds besides only that macro's implementations and
the private helpers no other file calls; a helper several files call has its own file. A dbt
macro the project implements for Spark (`spark__get_merge_sql`, the `view` materialization) names
its file after dbt's macro.
"""

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

MACROS = PACKAGE_PROJECT_DIR / "macros"
BLOCK = re.compile(
    r"\{%-?\s*(?P<kind>macro|test|materialization)\s+(?P<name>\w+)(?P<body>.*?)\{%-?\s*end(?P=kind)\s*-?%\}", re.DOTALL
)
IMPLEMENTATION = re.compile(r"(default|spark)__(?P<of>\w+)")
PLUMBING = re.compile(r"cdc_[a-z0-9_]+")
PRIVATE = re.compile(r"_(?!cdc_)[a-z][a-z0-9_]*")
HOOK = re.compile(r"(?!cdc_)[a-z][a-z0-9_]*")
CALLING_FOLDERS = ("models", "macros", "tests", "docs", "cdc_dbt")
"""Where a macro may be called from: the project, its tests and docs, the scaffold's templates."""


@dataclass(frozen=True)
class Block:
    kind: str
    name: str
    body: str
    path: Path


def blocks_of(path: Path) -> list[Block]:
    return [Block(m["kind"], m["name"], m["body"], path) for m in BLOCK.finditer(path.read_text())]


MACRO_FILES = sorted(MACROS.rglob("*.sql"))
BLOCKS = [block for path in MACRO_FILES for block in blocks_of(path)]
MACRO_NAMES = {block.name for block in BLOCKS if block.kind == "macro"}
HOOKS = {
    block.name
    for block in BLOCKS
    if block.kind == "macro" and HOOK.fullmatch(block.name) and not IMPLEMENTATION.fullmatch(block.name)
}


def calling_files() -> dict[Path, str]:
    files = [PACKAGE_PROJECT_DIR / "dbt_project.yml"]
    for folder in CALLING_FOLDERS:
        files += [p for p in (PACKAGE_PROJECT_DIR / folder).rglob("*") if p.suffix in (".sql", ".yml", ".md", ".py")]
    return {path: path.read_text() for path in files if path.is_file()}


CALLING_FILES = calling_files()


def files_calling(name: str) -> set[Path]:
    """The files that call or name the macro `name` as a call (a post-hook's text included)."""
    call = re.compile(rf"(?<![\w.])(?:cdc_dbt\.)?{re.escape(name)}\s*\(")
    return {path for path, text in CALLING_FILES.items() if call.search(text.replace(f"macro {name}(", ""))}


def test_there_are_macros_of_every_kind() -> None:
    kinds = {block.kind for block in BLOCKS}
    assert kinds == {"macro", "test", "materialization"}
    assert {"cdc_reads_this", "version_ended_by", "_truncate_comes_first", "column_rules"} <= {b.name for b in BLOCKS}


@pytest.mark.parametrize("path", MACRO_FILES, ids=lambda path: str(path.relative_to(MACROS)))
def test_a_file_is_named_after_its_macro(path: Path) -> None:
    blocks = blocks_of(path)
    implemented = {m["of"] for b in blocks if (m := IMPLEMENTATION.fullmatch(b.name))}
    own = [b.name for b in blocks if not IMPLEMENTATION.fullmatch(b.name) and not PRIVATE.fullmatch(b.name)]
    if not own:  # a shared private helper's own file, or dbt's macro implemented for Spark
        own = sorted(implemented) or [b.name for b in blocks]
    assert own == [path.stem], f"{path.relative_to(MACROS)} defines {[b.name for b in blocks]}"
    assert implemented <= {path.stem}, f"{path.relative_to(MACROS)} implements {implemented}"
    if any(b.kind == "test" for b in blocks):
        assert path.parent == MACROS / "generic_tests"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.kind == "macro"], ids=lambda block: block.name)
def test_a_macro_is_plumbing_a_hook_an_implementation_or_private(block: Block) -> None:
    name, dispatches = block.name, "adapter.dispatch(" in block.body
    if match := IMPLEMENTATION.fullmatch(name):
        # An implementation of this project's hook sits beside it; of dbt's macro, it is Spark's.
        assert match["of"] in HOOKS or name == "spark__get_merge_sql", name
    elif PLUMBING.fullmatch(name):
        assert not dispatches, f"{name} dispatches: a macro users override is a hook, named without cdc_"
    elif PRIVATE.fullmatch(name):
        assert not dispatches, name
    else:
        assert HOOK.fullmatch(name), f"{name}: neither cdc_<name>, _<name> nor a hook's name"
        assert f"adapter.dispatch('{name}', 'cdc_dbt')" in block.body, f"{name} has no prefix and does not dispatch"
        beside = {b.name for b in blocks_of(block.path)}
        assert f"default__{name}" in beside, f"{name}'s default__ implementation is not beside it"


def test_private_helpers_are_called_by_the_package_s_macros_only() -> None:
    outside = {}
    for block in BLOCKS:
        callers = files_calling(block.name) - set(MACRO_FILES)
        if PRIVATE.fullmatch(block.name) and callers:
            outside[block.name] = sorted(str(path.relative_to(PACKAGE_PROJECT_DIR)) for path in callers)
    assert outside == {}


def test_a_helper_lives_with_its_only_caller_and_plumbing_is_called_from_elsewhere() -> None:
    """A private helper that one other file alone calls lives in that file; a `cdc_` macro that
    nothing outside its own file calls is private (`_`), and its file is its caller's."""
    misplaced = []
    for block in BLOCKS:
        others = files_calling(block.name) - {block.path}
        if PRIVATE.fullmatch(block.name) and block.path.stem == block.name and len(others) < 2:
            misplaced.append(f"{block.name}: its own file, called from {sorted(p.name for p in others)}")
        if PLUMBING.fullmatch(block.name) and not others:
            misplaced.append(f"{block.name}: cdc_, and called only from its own file")
    assert misplaced == []


def test_every_macro_called_by_package_name_exists() -> None:
    call = re.compile(r"cdc_dbt\.(\w+)\s*\(")
    templated = re.compile(r"\{\{-?\s*cdc_dbt\.(\w+)\s*\(")
    unknown: dict[str, set[str]] = defaultdict(set)
    for path, text in CALLING_FILES.items():
        names = (templated if path.suffix in (".py", ".md") else call).findall(text)
        for name in names:
            if name not in MACRO_NAMES and f"test_{name}" not in MACRO_NAMES:
                unknown[name].add(str(path.relative_to(PACKAGE_PROJECT_DIR)))
    assert dict(unknown) == {}
