"""A model's SQL reads as its logic: what the build knows of the tables it wrote before
(`run_query`, `{{ this }}`, `is_incremental()`) is asked through the macros of
macros/incremental/, one place for the incremental plumbing. Read as files, without dbt."""

import re
from pathlib import Path

import pytest

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

MODEL_FILES = sorted(path.relative_to(PACKAGE_PROJECT_DIR) for path in (PACKAGE_PROJECT_DIR / "models").rglob("*.sql"))
PLUMBING = re.compile(r"\brun_query\s*\(|\{\{-?\s*this\b|\bis_incremental\s*\(")


def test_there_are_models_to_check() -> None:
    assert Path("models/intermediate/int_row_events_sequenced.sql") in MODEL_FILES


@pytest.mark.parametrize("path", MODEL_FILES, ids=str)
def test_a_model_leaves_incremental_plumbing_to_macros(path: Path) -> None:
    sql = (PACKAGE_PROJECT_DIR / path).read_text()
    found = [f"line {sql.count(chr(10), 0, match.start()) + 1}: {match.group(0)}" for match in PLUMBING.finditer(sql)]
    assert not found, f"{path} calls the incremental plumbing itself (use macros/incremental/): {found}"
