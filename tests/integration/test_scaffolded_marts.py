"""`cdc-dbt scaffold`, as written, builds: a typed mart for a table of each source format of the
demo (PostgreSQL with the converter schema, Qlik Replicate, MongoDB), scaffolded by the command in
a copy of the project, then built over the demo's core tables with the enforced contracts and
data tests the scaffold wrote, and holding every live row of its table, typed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import DEMO_LANDING, Build, DbtProject, copy_of_project

TABLES = {"inventory.customers": "customers", "HR.EMPLOYEES": "employees", "shop.reviews": "reviews"}
FOLDER = "scaffolded"


def scaffold(project: Path, source_table: str, name: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "cdc_dbt.cli", "scaffold", source_table, "--folder", FOLDER, "--name", name],
        cwd=project,
        env={"PATH": "/nonexistent", "CDC_LANDING_DIR": str(DEMO_LANDING)},  # no Java needed
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1].startswith("Review the types in ")


@pytest.fixture(scope="module")
def project_with_scaffolded_marts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project's dbt files (a user's checkout), with one scaffolded mart per table."""
    project = copy_of_project(tmp_path_factory.mktemp("project"))
    for source_table, table in TABLES.items():
        scaffold(project, source_table, f"scaffolded_{table}")
    return project


def test_scaffolded_marts_build_and_hold_every_live_row_typed(
    demo_build: Build, dbt_project: DbtProject, project_with_scaffolded_marts: Path
) -> None:
    # Only the new marts and their tests, over the demo's core tables built already.
    dbt_project.build(
        DEMO_LANDING,
        schema=demo_build.schema,
        select=f"path:models/marts/{FOLDER}",
        project_dir=project_with_scaffolded_marts,
        warn_error=True,  # typed_mart_fields_landed warns: every declared field has landed
    )
    for source_table, table in TABLES.items():
        folder = project_with_scaffolded_marts / "models" / "marts" / FOLDER
        current_yaml = yaml.safe_load((folder / f"_scaffolded_{table}__models.yml").read_text())["models"][0]
        fields = {column["name"]: column["meta"]["cdc_field"] for column in current_yaml["columns"] if "meta" in column}
        typed = demo_build.rows(f"select * from `{{schema}}`.`scaffolded_{table}_current` order by row_key")
        live = demo_build.rows(
            f"select row_key, row from `{{schema}}`.cdc_current where source_table = '{source_table}' order by row_key"
        )
        assert [row["row_key"] for row in typed] == [row["row_key"] for row in live] != []
        for typed_row, live_row in zip(typed, live, strict=True):
            values = json.loads(live_row["row"])
            # Every field present in the row came through its declared type (a null here would be a
            # value the type could not hold).
            missing = [
                name for name, field in fields.items() if values.get(field) is not None and typed_row[name] is None
            ]
            assert not missing, (table, typed_row["row_key"], missing)
        history = demo_build.rows(f"select count(*) as n from `{{schema}}`.`scaffolded_{table}_history`")
        versions = demo_build.rows(
            f"select count(*) as n from `{{schema}}`.cdc_history where source_table = '{source_table}'"
        )
        assert history == versions
