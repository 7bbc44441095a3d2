"""The typed marts' options, on the demo's inventory.customers, each mart compared with what its
option means computed here from the demo's `cdc_history`:

- `cdc_track_history_columns`: only a change of `email` makes a version of the history mart (a
  customer's name changes and `updated_at` on every change do not); consecutive versions are one,
  with the newest untracked values and exact `valid_from` / `valid_to`.
- `cdc_keep_deleted`: the current mart keeps deleted and truncated customers, with their last
  values, `is_deleted` and `deleted_ts`.
"""

import datetime as dt
import json
from typing import Any

import pytest

from tests.integration.conftest import CHECKS_FOLDER, DEMO_LANDING, Build, DbtProject, project_with_checks

SOURCE_TABLE = "inventory.customers"
FIELDS = {"customer_id": ("id", "int"), "email": ("email", "string"), "last_name": ("last_name", "string"),
          "updated_at": ("updated_at", "timestamp")}  # fmt: skip
"""Each mart column: the field of the row it reads and its type."""


def declaration(name: str, option: dict[str, Any], before: dict[str, str], after: dict[str, str]) -> dict[str, Any]:
    """A mart's YAML: the `before` columns, those read from the row (FIELDS), the `after` ones."""
    read = [
        {"name": column, "data_type": data_type, "description": f"`{field}`.", "meta": {"cdc_field": field}}
        for column, (field, data_type) in FIELDS.items()
    ]
    columns = [
        *({"name": column, "data_type": data_type, "description": column} for column, data_type in before.items()),
        *read,
        *({"name": column, "data_type": data_type, "description": column} for column, data_type in after.items()),
    ]
    meta = {"cdc_source_table": SOURCE_TABLE, "cdc_connector": "postgresql", **option}
    return {
        "name": name,
        "description": name,
        "config": {"meta": meta, "contract": {"enforced": True}},
        "columns": columns,
    }


KEY_COLUMNS = {"source_db": "string", "row_key": "string"}
HISTORY_COLUMNS = {"valid_from": "timestamp", "valid_to": "timestamp", "is_current": "boolean", "ended_by": "string"}
CURRENT_COLUMNS = {
    "last_op": "string",
    "last_changed_ts": "timestamp",
    "is_deleted": "boolean",
    "deleted_ts": "timestamp",
}
MARTS = {
    "customers_email_history": "{{ cdc_dbt.cdc_typed_history() }}",
    "customers_with_deleted": "{{ cdc_dbt.cdc_typed_current() }}",
}


@pytest.fixture(scope="module")
def marts_built(demo_build: Build, dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The two marts, built over the demo's core tables (built already)."""
    history = declaration(
        "customers_email_history",
        {"cdc_track_history_columns": ["email"]},
        {**KEY_COLUMNS, "version": "int"},
        HISTORY_COLUMNS,
    )
    current = declaration("customers_with_deleted", {"cdc_keep_deleted": True}, KEY_COLUMNS, CURRENT_COLUMNS)
    declarations = json.dumps({"version": 2, "models": [history, current]})
    project = project_with_checks(tmp_path_factory.mktemp("project"), MARTS, declarations)
    return dbt_project.build(
        DEMO_LANDING, schema=demo_build.schema, select=f"path:{CHECKS_FOLDER}", project_dir=project
    )


def demo_versions(build: Build) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The demo's versions of inventory.customers, by source database and key, in order."""
    rows = build.rows(
        "select source_db, row_key, version, row, valid_from, valid_to, is_current, ended_by"
        f" from `{{schema}}`.cdc_history where source_table = '{SOURCE_TABLE}' order by version"
    )
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_key.setdefault((row["source_db"], row["row_key"]), []).append({**row, "row": json.loads(row["row"])})
    return by_key


def tracked_versions(versions: list[dict[str, Any]], tracked: str) -> list[dict[str, Any]]:
    """What `cdc_track_history_columns: [<tracked>]` means: a version after one ended by an update
    with the same tracked value extends it, taking its other values and its end."""
    merged: list[dict[str, Any]] = []
    for version in versions:
        previous = merged[-1] if merged else None
        if previous and previous["ended_by"] == "u" and previous["row"][tracked] == version["row"][tracked]:
            previous.update(row=version["row"], valid_to=version["valid_to"], is_current=version["is_current"],
                            ended_by=version["ended_by"])  # fmt: skip
        else:
            merged.append({**version, "version": len(merged) + 1})
    return merged


def test_only_a_tracked_column_makes_a_version(marts_built: Build) -> None:
    compared = ("email", "last_name", "valid_from", "valid_to", "is_current", "ended_by")
    expected = {
        (*key, version["version"]): tuple({**version, **version["row"]}[name] for name in compared)
        for key, versions in demo_versions(marts_built).items()
        for version in tracked_versions(versions, "email")
    }
    mart = {
        (row["source_db"], row["row_key"], row["version"]): tuple(row[name] for name in compared)
        for row in marts_built.table("customers_email_history")
    }
    assert mart == expected
    all_versions = sum(len(versions) for versions in demo_versions(marts_built).values())
    assert len(mart) < all_versions, "name changes made versions of the demo's history: here they make none"


def test_deleted_and_truncated_rows_stay_with_their_last_values(marts_built: Build) -> None:
    expected = {}
    for key, versions in demo_versions(marts_built).items():
        last = versions[-1]
        deleted_ts = None if last["is_current"] else last["valid_to"]
        expected[key] = (last["row"]["email"], not last["is_current"], deleted_ts)
    mart = {
        (row["source_db"], row["row_key"]): (row["email"], row["is_deleted"], row["deleted_ts"])
        for row in marts_built.table("customers_with_deleted")
    }
    assert mart == expected
    assert any(is_deleted for _, is_deleted, _ in mart.values()), "the demo deletes customers"
    assert all(isinstance(ts, dt.datetime) for _, is_deleted, ts in mart.values() if is_deleted)


def test_rows_a_truncate_removed_are_deleted_at_the_truncates_time(marts_built: Build) -> None:
    """The demo truncates inventory.orders once: every order it removed is in
    cdc_current_with_deleted, deleted by `t` at the truncate's source time."""
    [truncate] = marts_built.rows(
        "select source_db, source_ts from `{schema}`.cdc_changes where source_table = 'inventory.orders' and op = 't'"
    )
    truncated = marts_built.rows(
        "select row_key, deleted_ts from `{schema}`.cdc_current_with_deleted"
        " where source_table = 'inventory.orders' and deleted_by = 't'"
    )
    # The generator never reuses an id after a truncate: a version it ended is its key's last.
    ended_by_it = marts_built.rows(
        "select row_key from `{schema}`.cdc_history where source_table = 'inventory.orders' and ended_by = 't'"
    )
    assert truncated, "the truncate removed orders"
    assert {row["deleted_ts"] for row in truncated} == {truncate["source_ts"]}
    assert {row["row_key"] for row in truncated} == {row["row_key"] for row in ended_by_it}
