"""Paths of the shared corpus of real connector messages (never copied into this repository).

A clone without `../shared/corpus` (a user's) skips the tests that read it, each with a one-line
reason; CI sets CDC_REQUIRE_CORPUS=1 (`.ci/run`), so there a missing corpus file fails instead.
"""

import os
from pathlib import Path
from typing import NoReturn

import pytest

CORPUS_DIR = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def corpus_file(*parts: str) -> Path:
    path = CORPUS_DIR.joinpath(*parts)
    if not path.is_file():
        _missing(path)
    return path


def corpus_dir() -> Path:
    """The whole corpus, for a test that reads every file of it."""
    if not CORPUS_DIR.is_dir():
        _missing(CORPUS_DIR)
    return CORPUS_DIR


def _missing(path: Path) -> NoReturn:
    reason = f"{path} is missing: these tests read ../shared/corpus beside the checkout"
    if os.environ.get("CDC_REQUIRE_CORPUS") == "1":
        raise FileNotFoundError(reason)
    pytest.skip(reason, allow_module_level=True)


def corpus_lines(*parts: str) -> list[str]:
    return [line for line in corpus_file(*parts).read_text().splitlines() if line.strip()]
