"""The core tables' contracts are enforced: a build whose model no longer gives the columns and
types its YAML declares fails, naming the column, and leaves the table consumers read as it was.

The demo's build (`demo_build`) passed every contract; here a copy of the project declares one
column of `cdc_current` with another type, as a change to the model or its YAML would, and
rebuilds that view alone over the demo's tables.
"""

from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import DEMO_LANDING, Build, DbtProject, copy_of_project

pytestmark = pytest.mark.spark


def test_a_core_table_whose_columns_break_its_contract_fails_the_build_and_stays_as_it_was(
    demo_build: Build, dbt_project: DbtProject, tmp_path: Path
) -> None:
    project = copy_of_project(tmp_path / "project")
    declaration = project / "models" / "marts" / "core" / "_cdc_current__models.yml"
    models = yaml.safe_load(declaration.read_text())
    [version] = [column for column in models["models"][0]["columns"] if column["name"] == "version"]
    assert version["data_type"] == "int"
    version["data_type"] = "bigint"
    declaration.write_text(yaml.safe_dump(models, sort_keys=False))
    before = demo_build.rows("select count(*) as n, sum(version) as versions from `{schema}`.cdc_current")

    with pytest.raises(AssertionError, match=r"(?s)cdc_current: .*[Cc]ontract.*version"):
        dbt_project.build(DEMO_LANDING, schema=demo_build.schema, select="cdc_current", project_dir=project)

    assert demo_build.rows("select count(*) as n, sum(version) as versions from `{schema}`.cdc_current") == before
