"""One SparkSession for every Spark test; dbt builds run inside it through dbtRunner.

A JVM starts once (about 20 s); each later build costs seconds. Each build gets its own target
schema and landing schema, so results of several builds can be compared side by side.
"""

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cdc_dbt.session import build_session
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings


@dataclass
class Build:
    """The tables of one dbt build, queried through the shared session."""

    spark: SparkSession
    schema: str

    def rows(self, query: str) -> list[dict[str, Any]]:
        """Run a query whose `{schema}` placeholder names this build's schema."""
        return [row.asDict(recursive=True) for row in self.spark.sql(query.format(schema=self.schema)).collect()]

    def table(self, name: str) -> list[dict[str, Any]]:
        return self.rows(f"select * from `{{schema}}`.`{name}`")


@dataclass
class DbtProject:
    spark: SparkSession
    target_dir: Path

    def build(
        self,
        landing_dir: Path,
        schema: str,
        variables: dict[str, Any] | None = None,
        *,
        unit_tests: bool = False,
        select: str | None = None,
        full_refresh: bool = False,
    ) -> Build:
        """`dbt build` of `landing_dir` into `schema`, data tests included; dbt unit tests only when asked,
        since they do not depend on the landed data. `select` narrows the build (dbt's --select). A second
        build into the same schema is incremental, unless `full_refresh`."""
        from dbt.cli.main import dbtRunner

        os.environ["CDC_LANDING_DIR"] = str(landing_dir)
        os.environ["CDC_SCHEMA"] = schema
        all_variables = {"landing_schema": f"{schema}_landing", **(variables or {})}
        args = [
            "build",
            "--project-dir", str(PACKAGE_PROJECT_DIR),
            "--profiles-dir", str(PACKAGE_PROJECT_DIR),
            "--target-path", str(self.target_dir),
            "--vars", json.dumps(all_variables),
            "--quiet",
            *([] if unit_tests else ["--exclude-resource-type", "unit_test"]),
            *([] if select is None else ["--select", select]),
            *(["--full-refresh"] if full_refresh else []),
        ]  # fmt: skip
        result = dbtRunner().invoke(args)
        if not result.success:
            failures = [
                f"{node.node.name}: {node.message}"
                for node in (result.result or [])
                if getattr(node, "status", None) not in ("success", "pass")
            ]
            raise AssertionError(f"dbt build failed: {result.exception or failures}")
        return Build(self.spark, schema)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    # The test inputs are small: fewer shuffle partitions mean fewer, cheaper tasks per query.
    os.environ.setdefault("CDC_SHUFFLE_PARTITIONS", "2")
    warehouse_dir = tmp_path_factory.mktemp("warehouse")
    settings = Settings(
        project_dir=PACKAGE_PROJECT_DIR,
        landing_dir=tmp_path_factory.mktemp("landing"),
        warehouse_dir=warehouse_dir,
        master_url=None,
    )
    session = build_session(settings)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def dbt_project(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> DbtProject:
    return DbtProject(spark, tmp_path_factory.mktemp("dbt-target"))
