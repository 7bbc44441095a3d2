"""What cdc-dbt's dbt project is made of, beside the code in a checkout: what a user's copy of the
project holds, and a wheel carries (setup.py adds the demo). Nothing but the standard library:
setup.py reads this file at build time, without importing the package and so its dependencies."""

import shutil
from pathlib import Path

DBT_PROJECT_FILES = ("dbt_project.yml", "profiles.yml")
DBT_PROJECT_FOLDERS = ("models", "macros", "tests/singular", "tests/fixtures")


def copy_dbt_project(source: Path, folder: Path) -> Path:
    """A copy of the dbt project at `source` in `folder` (a user's checkout), to change and build."""
    for subfolder in DBT_PROJECT_FOLDERS:
        shutil.copytree(source / subfolder, folder / subfolder)
    for file in DBT_PROJECT_FILES:
        shutil.copy(source / file, folder)
    return folder
