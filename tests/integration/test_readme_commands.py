"""The README's commands, as written, so that its front door cannot rot: taken from its code blocks
and run in a temporary copy of the checkout (a user's clone), on real landed files.

- **Quick start**: `./scripts/demo.sh`, on the project's own virtual environment (the copy's
  `.venv` links to it, so nothing is installed), then the README's query of the warehouse it
  built. The other quick-start command, `./scripts/test.sh`, is this suite: it is never run from
  in it.
- **Your own topics in four steps**: step 1's `kcat` reads a Kafka broker, which this test does
  not start. Its command is checked for what a build needs (kcat's JSON lines, written to a file
  a build reads), and the demo's landed files, which exist in the repository, take the place of
  its output, in the folder it writes to. Every other command of the four steps runs as written,
  in order, in one bash from the copy: one `cdc-dbt build` and the scaffold of a typed mart,
  which dbt then lists (without Spark). The build's `cdc_current` is read by path and compared
  with the demo generator's final state.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_dbt.project_files import copy_dbt_project
from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from tests.integration.conftest import DEMO_LANDING
from tests.integration.test_cli import SUMMARY, read_by_path
from tests.integration.test_generated_streams import DEMO_ORACLE, oracle, without_nulls

pytestmark = [pytest.mark.spark, pytest.mark.slow]

README = PACKAGE_PROJECT_DIR / "README.md"
VENV = Path(sys.prefix)
KCAT_FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt")
"""The names of kcat's files a build reads (docs/landing-formats.md)."""
SETTINGS = (
    "CDC_LANDING_DIR", "CDC_WAREHOUSE_DIR", "CDC_SCHEMA", "CDC_TABLE_FORMAT", "CDC_SKIP_UNCHANGED", "SPARK_MASTER_URL",
    "CDC_VENV", "VIRTUAL_ENV",
)  # fmt: skip
"""What a user's shell does not have set: the suite's own settings stay out of the README's commands."""


def readme_section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def bash_commands(section: str) -> list[str]:
    """The commands of the section's ```bash blocks, in order: a block's lines with its indent
    taken off, a line ending in `\\` joined with the next, blank and comment lines left out."""
    commands = []
    for indent, block in re.findall(r"^( *)```bash\n(.*?)^\1```", section, re.MULTILINE | re.DOTALL):
        lines = [line.removeprefix(indent) for line in block.splitlines()]
        for command in re.sub(r"\\\n\s*", " ", "\n".join(lines)).splitlines():
            if command.strip() and not command.lstrip().startswith("#"):
                commands.append(command.strip())
    return commands


def the_one(commands: list[str], prefix: str) -> str:
    [command] = [command for command in commands if command.startswith(prefix)]
    return command


def user_environment() -> dict[str, str]:
    """The environment of a user's shell, with this checkout's code first on the path (the virtual
    environment may be an editable install of another checkout). The suite's small-input Spark
    configuration (SPARK_CONF_DIR) stays: test_cli.py builds with the product's own."""
    environment = {name: value for name, value in os.environ.items() if name not in SETTINGS}
    return {**environment, "PYTHONPATH": str(PACKAGE_PROJECT_DIR)}


def run_bash(script: str, cwd: Path, timeout: int = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=user_environment(), capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's clone: the dbt project, the scripts, the demo and pyproject.toml, with `.venv` the
    project's virtual environment. scripts/_bootstrap.sh installs into `.venv` unless it holds the
    stamp of this pyproject.toml: a virtual environment it did not install is not written to."""
    pyproject = PACKAGE_PROJECT_DIR / "pyproject.toml"
    stamp = VENV / ".cdc-dbt-installed"
    if not stamp.is_file() or stamp.read_text().strip() != hashlib.sha256(pyproject.read_bytes()).hexdigest():
        pytest.skip(
            f"{VENV} was not installed by scripts/_bootstrap.sh for this pyproject.toml: the demo would install"
        )
    folder = copy_dbt_project(PACKAGE_PROJECT_DIR, tmp_path_factory.mktemp("clone"))
    for subfolder in ("scripts", "demo"):
        shutil.copytree(PACKAGE_PROJECT_DIR / subfolder, folder / subfolder)
    shutil.copy(pyproject, folder)
    (folder / ".venv").symlink_to(VENV, target_is_directory=True)
    return folder


def current_rows(tables: Path) -> dict[str, dict[str, object]]:
    """cdc_current by table and key, read by path (no Spark), null columns left out as the oracle's are."""
    _, rows = read_by_path(tables / "cdc_current", "select source_table, row_key, row from t")
    current: dict[str, dict[str, object]] = {}
    for row in rows:
        current.setdefault(row["source_table"], {})[row["row_key"]] = without_nulls(json.loads(row["row"]))
    return current


def test_the_quick_start_builds_the_demo_and_answers_its_query(checkout: Path) -> None:
    commands = bash_commands(readme_section("Quick start"))
    demo = the_one(commands, "./scripts/demo.sh")
    the_one(commands, "./scripts/test.sh")  # the suite: not run from in it
    query = the_one(commands, ".venv/bin/cdc-dbt sql ")
    expected = oracle(DEMO_ORACLE)

    built = run_bash(demo, checkout)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert f"Warehouse:    {checkout / '.warehouse'}" in built.stdout, "the clone's own warehouse"
    assert "Quarantined: nothing" in built.stdout
    summary = {
        match.group(1): int(match.group(3))
        for match in re.finditer(r"^(\S+) +(\d+) +(\d+) +(\d+)$", built.stdout, re.MULTILINE)
    }
    assert {table: summary.get(table) for table in expected} == {table: len(rows) for table, rows in expected.items()}

    queried = run_bash(query, checkout, timeout=600)
    assert queried.returncode == 0, queried.stderr[-3000:]
    assert [json.loads(line) for line in queried.stdout.splitlines()] == [{"n": sum(map(len, expected.values()))}]


def test_your_own_topics_in_four_steps_land_build_and_scaffold(checkout: Path) -> None:
    commands = bash_commands(readme_section("Your own topics in four steps"))
    kcat = the_one(commands, "kcat ")
    words = shlex.split(kcat)
    assert {"-C", "-J", "-e"} <= set(words), "consume, as JSON lines, and stop at the end of the topic"
    assert words[-2] == ">", "kcat's output goes to a file"
    landed_file = Path(words[-1])
    assert landed_file.suffix in KCAT_FILE_SUFFIXES, f"{landed_file}: a build reads no such file"
    # The broker's records: the demo's landed topics, in the folder kcat writes to.
    shutil.copytree(DEMO_LANDING, checkout / landed_file.parent, dirs_exist_ok=True)
    scaffold = shlex.split(the_one(commands, "cdc-dbt scaffold "))
    source_table = scaffold[2]
    stem = scaffold[scaffold.index("--name") + 1] if "--name" in scaffold else source_table.rsplit(".", 1)[-1].lower()

    steps = [f": {shlex.quote(kcat)}" if command == kcat else command for command in commands]  # no broker here
    script = "\n".join(
        [
            "set -eo pipefail",
            *(f"echo {shlex.quote('== ' + step)}\n{step}" for step in steps),
            'echo "CDC_LANDING_DIR=${CDC_LANDING_DIR:-}"',
            'echo "CDC_WAREHOUSE_DIR=${CDC_WAREHOUSE_DIR:-}"',
        ]
    )
    ran = run_bash(script, checkout)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-3000:]
    settings = dict(re.findall(r"^(CDC_\w+)=(.*)$", ran.stdout, re.MULTILINE))
    assert Path(settings["CDC_LANDING_DIR"]) == checkout / landed_file.parent, "step 2 names the folder step 1 fills"
    warehouse = Path(settings["CDC_WAREHOUSE_DIR"] or checkout / ".warehouse")

    # Step 3: one build of every landed record, and its tables those of the generator's final state.
    parsed = [SUMMARY.search(line) for line in ran.stdout.splitlines()]
    [counts] = [match.groups() for match in parsed if match]
    assert counts[-1] == "0", "nothing quarantined"
    assert "Completed successfully" in ran.stdout
    assert current_rows(warehouse / "tables" / "cdc.db") == oracle(DEMO_ORACLE)
    results = json.loads((checkout / "target" / "run_results.json").read_text())["results"]
    built_models = {result["unique_id"].rsplit(".", 1)[-1] for result in results}
    assert "cdc_current" in built_models
    assert "customers_current" not in built_models, "the demo's marts are never built into a warehouse of yours"

    # Step 4: the scaffolded mart is in the project, and dbt reads it.
    written = sorted(path.name for path in checkout.glob(f"models/marts/*/*{stem}_*"))
    assert written == [f"_{stem}__models.yml", f"{stem}_current.sql", f"{stem}_history.sql"], source_table
    listed = run_bash(
        f"source .venv/bin/activate\ncdc-dbt ls --resource-type model --select {stem}_current {stem}_history",
        checkout,
        timeout=600,
    )
    assert listed.returncode == 0, listed.stdout[-3000:] + listed.stderr[-3000:]
    listed_models = {line.rsplit(".", 1)[-1] for line in listed.stdout.splitlines() if line.startswith("cdc_dbt.")}
    assert listed_models == {f"{stem}_current", f"{stem}_history"}
