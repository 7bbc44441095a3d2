"""The wheel carries the runtime, all of it and nothing else: pyproject.toml names its packages one
by one (setuptools finds none by itself), so a new subpackage left off the list would be missing
from an installed cdc-dbt while every test run from the checkout still passed."""

import tomllib

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

RUNTIME = ("udfs", "cdc_dbt")


def test_the_wheel_names_every_runtime_package_and_no_other() -> None:
    pyproject = tomllib.loads((PACKAGE_PROJECT_DIR / "pyproject.toml").read_text())
    listed = pyproject["tool"]["setuptools"]["packages"]
    folders = {
        ".".join(folder.relative_to(PACKAGE_PROJECT_DIR).parts)
        for top in RUNTIME
        for folder in [PACKAGE_PROJECT_DIR / top, *(PACKAGE_PROJECT_DIR / top).rglob("*")]
        if folder.is_dir() and folder.name != "__pycache__" and not folder.name.startswith(".")
    }
    assert sorted(listed) == sorted(folders)
    assert "generator" not in listed, "the data generator lives in the checkout, not in the wheel"
