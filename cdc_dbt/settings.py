"""Where things live: resolved once from the environment with defaults under the project."""

import os
from dataclasses import dataclass
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent
INSTALLED_PROJECT_DIR = Path(__file__).resolve().parent / "dbt_project"
"""The copy of the dbt project a wheel carries (setup.py); an editable install has none."""
PACKAGE_PROJECT_DIR = _CHECKOUT if (_CHECKOUT / "dbt_project.yml").is_file() else INSTALLED_PROJECT_DIR
"""cdc-dbt's own dbt project: this checkout, or the copy an installed wheel carries."""
DEFAULT_SCHEMA = "cdc"
TABLE_FORMATS = ("delta", "parquet", "iceberg")
"""CDC_TABLE_FORMAT's choices, the default first (docs/table-formats.md)."""


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
    table_format: str = TABLE_FORMATS[0]
    """CDC_TABLE_FORMAT: the format of every table the build writes (`delta`, `parquet` or `iceberg`).
    dbt_project.yml reads the same variable with the same default."""

    @property
    def profiles_dir(self) -> Path:
        return profiles_dir_of(self.project_dir)

    @property
    def tables_dir(self) -> Path:
        return self.warehouse_dir / "tables"

    @property
    def metastore_dir(self) -> Path:
        return self.warehouse_dir / "metastore_db"

    @property
    def was_built(self) -> bool:
        """Whether a build ever wrote to this warehouse: its tables' folder exists, whatever
        catalog names the tables (the Derby metastore, Spark's in-memory one, Iceberg's)."""
        return self.tables_dir.is_dir()


def profiles_dir_of(project_dir: Path) -> Path:
    """The project's own profiles.yml if it has one; else cdc-dbt's, whose `cdc_dbt` profile a
    user's dbt project names (`profile: cdc_dbt`) to run in the session cdc-dbt builds."""
    return project_dir if (project_dir / "profiles.yml").is_file() else PACKAGE_PROJECT_DIR


def find_project_dir(start: Path) -> Path:
    """The nearest folder at or above `start` holding dbt_project.yml, else this checkout."""
    for folder in (start, *start.parents):
        if (folder / "dbt_project.yml").is_file():
            return folder
    return PACKAGE_PROJECT_DIR


def load_settings(environ: dict[str, str] | None = None, cwd: Path | None = None) -> Settings:
    environ = dict(os.environ) if environ is None else environ
    cwd = (cwd or Path.cwd()).resolve()
    project_dir = find_project_dir(cwd)
    # A wheel's own project sits among the installed packages: no place for a warehouse.
    warehouse_parent = cwd if project_dir == INSTALLED_PROJECT_DIR else project_dir
    return Settings(
        project_dir=project_dir,
        landing_dir=_path(environ.get("CDC_LANDING_DIR"), project_dir / "demo" / "landing"),
        warehouse_dir=_path(environ.get("CDC_WAREHOUSE_DIR"), warehouse_parent / ".warehouse"),
        master_url=environ.get("SPARK_MASTER_URL") or None,
        # As profiles.yml's env_var('CDC_SCHEMA', 'cdc') reads it: set, even to "", it is used.
        schema=environ.get("CDC_SCHEMA", DEFAULT_SCHEMA),
        table_format=(environ.get("CDC_TABLE_FORMAT") or TABLE_FORMATS[0]).strip().lower(),
    )


def table_format_mistake(settings: Settings) -> str | None:
    """A CDC_TABLE_FORMAT that names no format this project writes, said in one line; else None."""
    if settings.table_format in TABLE_FORMATS:
        return None
    return (
        f"CDC_TABLE_FORMAT={settings.table_format!r} is no table format cdc-dbt writes:"
        f" use one of {', '.join(TABLE_FORMATS)}"
    )


def _path(value: str | None, default: Path) -> Path:
    return Path(value).expanduser().resolve() if value else default
