"""The SCD2 rules per key (`macros/generic_tests/scd2_*.sql`) with `generation_column`: they check the rows
of the newest generation, the keys the last build recomputed, and leave superseded rows alone.

A copy of the project adds three small models of versions in two generations and builds them:
superseded rows that break a rule pass, the newest generation breaking one fails, and the same
rows checked without `generation_column` fail as every row is read.
"""

from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import DEMO_LANDING, Build, DbtProject, project_with_checks

pytestmark = pytest.mark.spark

VERSIONS = """
select * from values
    {rows}
as rows (source_db, source_table, row_key, version, valid_from, valid_to, is_current, ended_by, generation)
"""
CONSECUTIVE = [
    "(null, 't', '1', 1, timestamp'2024-01-01', timestamp'2024-01-02', false, 'u', {generation})",
    "(null, 't', '1', 2, timestamp'2024-01-02', null, true, null, {generation})",
]
WITH_A_GAP = [
    "(null, 't', '1', 1, timestamp'2024-01-01', timestamp'2024-01-02', false, 'u', {generation})",
    "(null, 't', '1', 3, timestamp'2024-01-02', null, true, null, {generation})",
]
SCD2_TESTS = (
    "scd2_versions_are_consecutive",
    "scd2_versions_do_not_overlap",
    "scd2_one_current_version_per_live_key",
    "scd2_current_iff_open",
)


def versions(older: list[str], newest: list[str]) -> str:
    rows = [row.format(generation=1) for row in older] + [row.format(generation=2) for row in newest]
    return VERSIONS.format(rows=",\n    ".join(rows))


def declared(model: str, generation_column: str | None) -> dict[str, object]:
    arguments = {"arguments": {"generation_column": generation_column}} if generation_column else None
    return {"name": model, "data_tests": [{test: arguments} if arguments else test for test in SCD2_TESTS]}


def test_the_rules_read_the_newest_generation_when_told_and_every_row_otherwise(
    demo_build: Build, dbt_project: DbtProject, tmp_path: Path
) -> None:
    cases = {
        "versions_superseded_broken": (versions(WITH_A_GAP, CONSECUTIVE), "generation"),
        "versions_newest_broken": (versions(CONSECUTIVE, WITH_A_GAP), "generation"),
        "versions_every_row": (versions(WITH_A_GAP, CONSECUTIVE), None),
    }
    declaration = {"version": 2, "models": [declared(model, column) for model, (_, column) in cases.items()]}
    project = project_with_checks(
        tmp_path / "project",
        {model: sql for model, (sql, _) in cases.items()},
        yaml.safe_dump(declaration, sort_keys=False),
    )
    try:
        with pytest.raises(AssertionError) as failed:
            dbt_project.build(DEMO_LANDING, demo_build.schema, project_dir=project, select=" ".join(cases))
    finally:  # the demo's schema is shared: leave it as the demo's build made it
        for model in cases:
            demo_build.rows(f"drop view if exists `{{schema}}`.`{model}`")

    failing = {(test, model) for test in SCD2_TESTS for model in cases if f"'{test}_{model}" in str(failed.value)}
    assert failing == {
        ("scd2_versions_are_consecutive", "versions_newest_broken"),
        # Every row: the two generations' versions of the key mix.
        ("scd2_versions_are_consecutive", "versions_every_row"),
        ("scd2_versions_do_not_overlap", "versions_every_row"),
        ("scd2_one_current_version_per_live_key", "versions_every_row"),
    }, str(failed.value)
