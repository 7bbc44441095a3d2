"""cdc-dbt from outside this checkout: as a dbt package of a user's own dbt project, and as an
installed wheel.

- The user's project, in a folder of its own, installs this one with `packages.yml` (`local:`),
  scaffolds a typed mart of the demo's MongoDB collection with `cdc-dbt scaffold` and builds it
  over the demo's core tables: the package's macros and generic tests work from the user's models
  and YAML, the demo's typed marts stay out, and the mart holds every live document.
- The wheel carries the dbt project: installed into a folder of its own, `cdc-dbt` run from an
  empty folder finds the models, parses them and writes nothing among the installed files.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from tests.integration.conftest import DEMO_LANDING, Build, DbtProject

VENV_BIN = Path(sys.executable).parent
USER_PROJECT = """\
name: shop_analytics
version: "1.0.0"
# cdc-dbt's profile: dbt runs inside the session cdc-dbt builds, where its functions are registered.
profile: cdc_dbt
"""


def run(command: list[str], cwd: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env={**os.environ, **environment}, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def user_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("shop_analytics")
    (project / "dbt_project.yml").write_text(USER_PROJECT)
    (project / "packages.yml").write_text(f"packages:\n  - local: {PACKAGE_PROJECT_DIR}\n")
    deps = run([str(VENV_BIN / "dbt"), "deps"], project)
    assert deps.returncode == 0, deps.stdout + deps.stderr
    scaffolded = run(
        [sys.executable, "-m", "cdc_dbt.cli", "scaffold", "shop.reviews", "--folder", "shop", "--name", "shop_reviews"],
        project,
        CDC_LANDING_DIR=str(DEMO_LANDING),
        PATH="/nonexistent",  # no Java needed
    )
    assert scaffolded.returncode == 0, scaffolded.stderr
    return project


@pytest.mark.spark
def test_a_users_own_dbt_project_builds_a_typed_mart_on_the_package(
    demo_build: Build, dbt_project: DbtProject, user_project: Path
) -> None:
    # The user's mart and its tests, over the core tables the demo's build wrote (the package's
    # models are this project's, built and tested there).
    dbt_project.build(
        DEMO_LANDING,
        schema=demo_build.schema,
        select="shop_reviews_current",
        project_dir=user_project,
        warn_error=True,  # typed_mart_fields_landed warns: every declared field has landed
    )
    manifest = json.loads((dbt_project.last_target / "manifest.json").read_text())
    package_models = {node["name"] for node in manifest["nodes"].values() if node["package_name"] == "cdc_dbt"}
    assert {"cdc_current", "cdc_history", "int_row_events_versioned"} <= package_models
    assert not package_models & {"customers_current", "reviews_current"}, "the demo's marts are the demo's"
    results = json.loads((dbt_project.last_target / "run_results.json").read_text())["results"]
    built = {result["unique_id"] for result in results}
    assert "model.shop_analytics.shop_reviews_current" in built
    assert any(
        unique_id.startswith("test.shop_analytics.") and "typed_mart_fields_landed" in unique_id for unique_id in built
    ), "the package's generic test, named in the user's YAML"

    typed = demo_build.rows("select row_key from `{schema}`.shop_reviews_current order by row_key")
    live = demo_build.rows(
        "select row_key from `{schema}`.cdc_current where source_table = 'shop.reviews' order by row_key"
    )
    assert typed == live != []


@pytest.mark.slow
def test_the_installed_wheel_finds_its_own_dbt_project(tmp_path: Path) -> None:
    wheel_dir, install_dir, work_dir = tmp_path / "wheel", tmp_path / "installed", tmp_path / "work"
    work_dir.mkdir()
    built = run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(PACKAGE_PROJECT_DIR), "-w", str(wheel_dir)],
        tmp_path,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = wheel_dir.glob("cdc_dbt-*.whl")
    installed = run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(install_dir), str(wheel)],
        tmp_path,
    )
    assert installed.returncode == 0, installed.stderr
    bundled = install_dir / "cdc_dbt" / "dbt_project"
    assert (bundled / "dbt_project.yml").is_file()
    assert (bundled / "macros" / "marts" / "cdc_typed_current.sql").is_file()
    assert (bundled / "macros" / "generic_tests" / "column_rules.sql").is_file()
    files_installed = sorted(bundled.rglob("*"))

    # The installed copy, not this checkout: its folder comes first on the path.
    listed = run(
        [sys.executable, "-m", "cdc_dbt.cli", "ls", "--resource-type", "model", "--output", "path"],
        work_dir,
        PYTHONPATH=str(install_dir),
        PATH="/nonexistent",  # listing needs no Java
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert {"models/marts/core/cdc_current.sql", "models/marts/core/cdc_history.sql"} <= set(listed.stdout.split())
    assert sorted(bundled.rglob("*")) == files_installed, "dbt wrote among the installed files"
    assert (work_dir / "target" / "manifest.json").is_file()
