"""The dbt project's YAML stays small and plain: no file past about 350 lines (split a folder's YAML
by model instead), and no anchors, aliases or merge keys (a description several models share is a
doc block in the folder's `_<folder>__docs.md`). Read as files, without dbt."""

from pathlib import Path

import pytest
import yaml

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

MAX_LINES = 350
YAML_FILES = sorted(
    path.relative_to(PACKAGE_PROJECT_DIR)
    for folder in ("models", "macros", "tests")
    for pattern in ("*.yml", "*.yaml")
    for path in (PACKAGE_PROJECT_DIR / folder).rglob(pattern)
)


def test_there_is_yaml_to_check() -> None:
    assert Path("models/intermediate/_int_records_parsed__models.yml") in YAML_FILES


@pytest.mark.parametrize("path", YAML_FILES, ids=str)
def test_a_yaml_file_is_short(path: Path) -> None:
    assert len((PACKAGE_PROJECT_DIR / path).read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", YAML_FILES, ids=str)
def test_a_yaml_file_has_no_anchors(path: Path) -> None:
    found = []
    for event in yaml.parse((PACKAGE_PROJECT_DIR / path).read_text()):
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            found.append(f"line {line}: alias *{event.anchor}")
        elif getattr(event, "anchor", None):
            found.append(f"line {line}: anchor &{event.anchor}")
        elif isinstance(event, yaml.ScalarEvent) and event.value == "<<" and event.implicit[0]:
            found.append(f"line {line}: merge key <<")
    assert found == []
