"""Paths of the shared corpus of real connector messages (never copied into this repository)."""

from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def corpus_file(*parts: str) -> Path:
    path = CORPUS_DIR.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the tests need ../shared/corpus beside the checkout")
    return path


def corpus_lines(*parts: str) -> list[str]:
    return [line for line in corpus_file(*parts).read_text().splitlines() if line.strip()]
