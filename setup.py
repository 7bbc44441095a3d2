"""The wheel carries the dbt project beside the code: `cdc-dbt` run from an installed wheel (a
Databricks wheel task, say) finds its models, macros and tests in `cdc_dbt/dbt_project/`, copied
there from this checkout's top level when the wheel is built. An editable install reads the
checkout itself (cdc_dbt/settings.py)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CHECKOUT = Path(__file__).resolve().parent
DBT_PROJECT_FILES = ("dbt_project.yml", "profiles.yml")
DBT_PROJECT_FOLDERS = ("models", "macros", "tests/generic", "tests/singular", "tests/fixtures", "demo")
BUNDLED_PROJECT = Path("cdc_dbt") / "dbt_project"


class BuildWithDbtProject(build_py):
    """Copies the dbt project into the built package (setuptools' package data cannot reach
    folders outside the package)."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / BUNDLED_PROJECT
        shutil.rmtree(target, ignore_errors=True)
        for folder in DBT_PROJECT_FOLDERS:
            shutil.copytree(CHECKOUT / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"))
        for file in DBT_PROJECT_FILES:
            shutil.copy(CHECKOUT / file, target / file)


setup(cmdclass={"build_py": BuildWithDbtProject})
