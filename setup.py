"""The wheel carries the dbt project beside the code: `cdc-dbt` run from an installed wheel (a
Databricks wheel task, say) finds its models, macros and tests in `cdc_dbt/dbt_project/`, copied
there from this checkout's top level when the wheel is built. An editable install reads the
checkout itself (cdc_dbt/settings.py)."""

import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CHECKOUT = Path(__file__).resolve().parent
# Read, not imported: importing the cdc_dbt package would import its dependencies at build time.
PROJECT_FILES = runpy.run_path(str(CHECKOUT / "cdc_dbt" / "project_files.py"))
BUNDLED_FILES = PROJECT_FILES["DBT_PROJECT_FILES"]
# And the demo: its landing is what `cdc-dbt` builds by default when run from the wheel.
BUNDLED_FOLDERS = (*PROJECT_FILES["DBT_PROJECT_FOLDERS"], "demo")
BUNDLED_PROJECT = Path("cdc_dbt") / "dbt_project"


class BuildWithDbtProject(build_py):
    """Copies the dbt project into the built package (setuptools' package data cannot reach
    folders outside the package)."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / BUNDLED_PROJECT
        shutil.rmtree(target, ignore_errors=True)
        for folder in BUNDLED_FOLDERS:
            shutil.copytree(CHECKOUT / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"))
        for file in BUNDLED_FILES:
            shutil.copy(CHECKOUT / file, target / file)


setup(cmdclass={"build_py": BuildWithDbtProject})
