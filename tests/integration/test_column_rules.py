"""`column_rules`, the test that checks every `not_null` and `accepted_values` rule of a model and
its grain in one query, fails with one row per broken rule (its column, the rule, how many rows
break it), lets what the rules allow through, and stops a malformed declaration with one clear error.

Every build of the suite runs it on the project's own models, where it must pass; here a copy of
the project adds a small model whose rows break some rules and keep others, and builds it.
"""

from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import CHECKS_DECLARATION, DEMO_LANDING, Build, DbtProject, project_with_checks

pytestmark = pytest.mark.spark

RULES_BROKEN = """
select * from values
    ('change', null, 'c', "it's"),
    ('ignored', null, 'x', null),
    (null, 'late', 'd', "it's"),
    ('change', null, 'c', "it's")
as rows (outcome, reason, op, note)
"""
RULES_BROKEN_RULES = {
    "outcome": {"not_null": True, "accepted_values": ["change", "ignored"]},
    "reason": {"not_null": "outcome = 'ignored'"},
    "op": {"accepted_values": ["c", "d"]},
    "note": {"accepted_values": ["it's"]},
}


RULES_BROKEN_GRAIN = {"grain": ["note"], "grain_where": "outcome = 'change'"}
"""Two rows of `change` share their note (of all rows, three do)."""


def declared(model: str, columns: object, **grain: object) -> str:
    """The YAML of `model` with one column_rules test whose `columns` argument is `columns`."""
    test = {"column_rules": {"arguments": {"columns": columns, **grain}}}
    return yaml.safe_dump({"version": 2, "models": [{"name": model, "data_tests": [test]}]}, sort_keys=False)


def test_broken_rules_fail_one_row_each_and_a_misdeclared_rule_stops_the_build_naming_it(
    demo_build: Build, dbt_project: DbtProject, tmp_path: Path
) -> None:
    project = project_with_checks(
        tmp_path / "project",
        {"rules_broken": RULES_BROKEN},
        declared("rules_broken", RULES_BROKEN_RULES, **RULES_BROKEN_GRAIN),
    )
    build = {"landing_dir": DEMO_LANDING, "schema": demo_build.schema, "project_dir": project}
    try:
        with pytest.raises(AssertionError, match="Got 4 results, configured to fail if != 0"):
            dbt_project.build(**build, select="rules_broken")
        [compiled] = (dbt_project.last_target / "compiled").rglob("column_rules_rules_broken_*.sql")
        broken_rules = demo_build.rows(compiled.read_text())

        # A rule misspelled: the build stops before running anything, naming the column and the rule.
        (project / CHECKS_DECLARATION).write_text(declared("rules_broken", {"op": {"not_nul": True}}))
        with pytest.raises(AssertionError) as misdeclared:
            dbt_project.build(**build, select="rules_broken")
    finally:  # the demo's schema is shared: leave it as the demo's build made it
        demo_build.rows("drop view if exists `{schema}`.`rules_broken`")

    assert (
        "column_rules: the rules of `op` must be a mapping of `not_null` (true, or the condition under which the"
        ' column is never null) and `accepted_values` (a list), got {"not_nul": true}'
    ) in str(misdeclared.value)
    assert sorted(broken_rules, key=str) == sorted(
        [
            {"column_name": "outcome", "rule": "not_null", "failing_rows": 1},
            {"column_name": "reason", "rule": "not_null where outcome = 'ignored'", "failing_rows": 1},
            {"column_name": "op", "rule": "accepted_values", "failing_rows": 1},
            {"column_name": "note", "rule": "unique combination where outcome = 'change'", "failing_rows": 1},
        ],
        key=str,
    )
