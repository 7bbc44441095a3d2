"""The project's Markdown holds together: every relative link names a file that exists and, with a
`#fragment`, a heading of that file (as GitHub makes anchors of headings); and the README stays a
front door, short, with the two quick-start commands as they are. Read as files, nothing run."""

import re
from pathlib import Path

import pytest

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

DOCUMENTS = sorted(
    path.relative_to(PACKAGE_PROJECT_DIR)
    for path in (
        *PACKAGE_PROJECT_DIR.glob("*.md"),
        *PACKAGE_PROJECT_DIR.glob("docs/*.md"),
        *PACKAGE_PROJECT_DIR.glob("bench/*.md"),
        *PACKAGE_PROJECT_DIR.glob("tests/**/*.md"),
    )
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$")
FENCE = re.compile(r"^\s*```")
README_MAX_LINES = 250
QUICK_START = """\
```bash
./scripts/demo.sh     # build the bundled Debezium and Qlik events on an embedded Spark and print a summary
./scripts/test.sh     # the whole test suite: ruff, sqlfluff, pytest (unit, corpus, CLI, dbt tests)
```
"""


def outside_code(text: str) -> list[str]:
    """The lines of `text` outside fenced code blocks."""
    lines, in_code = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            lines.append(line)
    return lines


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of `path`: lower case, punctuation but `-` and `_`
    dropped, spaces as `-`, a repeated heading numbered `-1`, `-2`, ..."""
    seen: dict[str, int] = {}
    for line in outside_code(path.read_text()):
        heading = HEADING.match(line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            if count:
                seen[f"{slug}-{count}"] = 1
    return set(seen)


def relative_links(path: Path) -> list[str]:
    return [
        target
        for line in outside_code(path.read_text())
        for target in LINK.findall(line.replace("`", ""))
        if not re.match(r"[a-z]+:", target)
    ]


@pytest.mark.parametrize("document", DOCUMENTS, ids=str)
def test_every_relative_link_resolves(document: Path) -> None:
    source = PACKAGE_PROJECT_DIR / document
    broken = []
    for target in relative_links(source):
        file_part, _, fragment = target.partition("#")
        linked = (source.parent / file_part).resolve() if file_part else source
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and (linked.suffix != ".md" or fragment not in anchors(linked)):
            broken.append(f"{target}: no heading #{fragment}")
    assert not broken, f"{document}: {broken}"


def test_the_link_checker_knows_githubs_anchors() -> None:
    assert {"landing-from-kafka-cdc-dbt-land", "where-the-suites-time-goes", "limits-plainly"} <= (
        anchors(PACKAGE_PROJECT_DIR / "docs" / "commands.md")
        | anchors(PACKAGE_PROJECT_DIR / "docs" / "development.md")
        | anchors(PACKAGE_PROJECT_DIR / "docs" / "incremental-builds.md")
    )


def test_the_readme_is_a_front_door() -> None:
    """Short enough to read in a minute; what is not there is linked from it."""
    readme = (PACKAGE_PROJECT_DIR / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert QUICK_START in readme, "the two quick-start commands, exactly"
    linked = {target.partition("#")[0] for target in relative_links(PACKAGE_PROJECT_DIR / "README.md")}
    pages = {str(path) for path in DOCUMENTS if path.parts[0] == "docs"} | {"CHANGELOG.md", "bench/README.md"}
    assert pages <= linked, f"pages the README does not link: {sorted(pages - linked)}"
