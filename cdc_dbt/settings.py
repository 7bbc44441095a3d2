"""Where things live: resolved once from the environment with defaults under the project."""

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_PROJECT_DIR = Path(__file__).resolve().parent.parent
DEFAULT_SCHEMA = "cdc"


@dataclass(frozen=True)
class Settings:
    project_dir: Path
    """The dbt project (holds dbt_project.yml and profiles.yml)."""
    landing_dir: Path
    """CDC_LANDING_DIR: the landed files the next build reads, recursively."""
    warehouse_dir: Path
    """CDC_WAREHOUSE_DIR: all table data and the metastore; one folder, one warehouse."""
    master_url: str | None
    """SPARK_MASTER_URL: a Spark cluster to run on instead of the embedded local Spark."""
    schema: str = DEFAULT_SCHEMA
    """CDC_SCHEMA: the Spark database the output tables go to. dbt's profile (profiles.yml) reads
    the same variable with the same default, so the models' schema is this one."""

    @property
    def tables_dir(self) -> Path:
        return self.warehouse_dir / "tables"

    @property
    def metastore_dir(self) -> Path:
        return self.warehouse_dir / "metastore_db"


def find_project_dir(start: Path) -> Path:
    """The nearest folder at or above `start` holding dbt_project.yml, else this checkout."""
    for folder in (start, *start.parents):
        if (folder / "dbt_project.yml").is_file():
            return folder
    return PACKAGE_PROJECT_DIR


def load_settings(environ: dict[str, str] | None = None, cwd: Path | None = None) -> Settings:
    environ = dict(os.environ) if environ is None else environ
    project_dir = find_project_dir((cwd or Path.cwd()).resolve())
    return Settings(
        project_dir=project_dir,
        landing_dir=_path(environ.get("CDC_LANDING_DIR"), project_dir / "demo" / "landing"),
        warehouse_dir=_path(environ.get("CDC_WAREHOUSE_DIR"), project_dir / ".warehouse"),
        master_url=environ.get("SPARK_MASTER_URL") or None,
        # As profiles.yml's env_var('CDC_SCHEMA', 'cdc') reads it: set, even to "", it is used.
        schema=environ.get("CDC_SCHEMA", DEFAULT_SCHEMA),
    )


def _path(value: str | None, default: Path) -> Path:
    return Path(value).expanduser().resolve() if value else default
