"""dbt-project-evaluator's structural rules, checked over the parsed manifest (dbt Hub is out of reach).

Exceptions live in tests/structure_waivers.yml, each with a reason.
"""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from udfs.reasons import QUARANTINE_REASONS

PROJECT = "cdc_dbt"
CORE_TABLES = {"cdc_changes", "cdc_current", "cdc_history", "cdc_quarantine", "cdc_transactions"}
"""The tables consumers and other dbt projects build on, by name."""
WAIVERS = yaml.safe_load((PACKAGE_PROJECT_DIR / "tests" / "structure_waivers.yml").read_text())


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from dbt.cli.main import dbtRunner

    target: Path = tmp_path_factory.mktemp("parse-target")
    result = dbtRunner().invoke(
        [
            "--warn-error",
            "parse",
            "--project-dir",
            str(PACKAGE_PROJECT_DIR),
            "--profiles-dir",
            str(PACKAGE_PROJECT_DIR),
            "--target",
            "local",
            "--target-path",
            str(target),
            # The demo's typed marts are held to the same rules.
            "--vars",
            "{example_marts: true}",
        ]
    )
    assert result.success, f"dbt parse --warn-error failed: {result.exception}"
    return result.result


def own_nodes(manifest: Any, resource_type: str) -> list[Any]:
    return [
        node for node in manifest.nodes.values() if node.resource_type == resource_type and node.package_name == PROJECT
    ]


def layer(model: Any) -> str:
    return Path(model.original_file_path).parts[1]


def test_every_model_and_column_is_described(manifest: Any) -> None:
    undocumented = []
    for model in own_nodes(manifest, "model"):
        if not model.description.strip():
            undocumented.append(model.name)
        undocumented += [f"{model.name}.{name}" for name, column in model.columns.items() if not column.description]
    for source in manifest.sources.values():
        if not source.description.strip():
            undocumented.append(f"source {source.name}")
        undocumented += [f"{source.name}.{name}" for name, column in source.columns.items() if not column.description]
    assert undocumented == []


def is_grain_test(test: Any) -> bool:
    """`unique`, `unique_combination_of_columns`, or `column_rules` with a `grain`."""
    metadata = getattr(test, "test_metadata", None)
    if metadata is None:
        return False
    return metadata.name in ("unique_combination_of_columns", "unique") or (
        metadata.name == "column_rules" and bool(metadata.kwargs.get("grain"))
    )


def test_every_model_states_its_grain_and_has_a_grain_test(manifest: Any) -> None:
    tested = {node.attached_node for node in own_nodes(manifest, "test") if is_grain_test(node)}
    models = own_nodes(manifest, "model")
    assert [m.name for m in models if m.unique_id not in tested] == []
    assert [m.name for m in models if not re.search(r"\bone row per\b", m.description, re.IGNORECASE)] == []


def test_layers_flow_one_way(manifest: Any) -> None:
    waived = {waiver["model"] for waiver in WAIVERS["marts_reading_marts"]}
    problems = []
    models = {m.unique_id: m for m in own_nodes(manifest, "model")}
    for model in models.values():
        parents = model.depends_on.nodes
        source_parents = [p for p in parents if p.startswith("source.")]
        model_parents = [models[p] for p in parents if p in models]
        if source_parents and layer(model) != "staging":
            problems.append(f"{model.name} reads a source outside staging")
        if source_parents and model_parents:
            problems.append(f"{model.name} reads both a source and a model")
        for parent in model_parents:
            if layer(model) == "staging":
                problems.append(f"staging model {model.name} reads {parent.name}")
            if layer(model) == "intermediate" and layer(parent) == "marts":
                problems.append(f"{model.name} reads the mart {parent.name}")
            if layer(model) == "marts" and layer(parent) == "marts" and model.name not in waived:
                problems.append(f"{model.name} reads the mart {parent.name} without a waiver")
    assert problems == []


def test_model_names_follow_their_layer(manifest: Any) -> None:
    wrong = []
    for model in own_nodes(manifest, "model"):
        if layer(model) == "staging" and not re.fullmatch(r"stg_[a-z0-9]+__[a-z0-9_]+", model.name):
            wrong.append(model.name)
        if layer(model) == "intermediate" and not model.name.startswith("int_"):
            wrong.append(model.name)
        if layer(model) == "marts" and model.name.startswith(("stg_", "int_")):
            wrong.append(model.name)
    assert wrong == []
    marts = {model.name for model in own_nodes(manifest, "model") if layer(model) == "marts"}
    assert marts >= CORE_TABLES


def test_the_core_tables_are_public_with_enforced_contracts_typing_every_column(manifest: Any) -> None:
    core = [model for model in own_nodes(manifest, "model") if model.name in CORE_TABLES]
    assert {model.name for model in core} == CORE_TABLES
    for model in core:
        assert model.access.value == "public", model.name
        assert model.config.contract.enforced, model.name
        untyped = [name for name, column in model.columns.items() if not column.data_type]
        assert model.columns and untyped == [], (model.name, untyped)


def test_column_rules_are_checked_in_one_query_per_model(manifest: Any) -> None:
    """`not_null` and `accepted_values` rules are declared in each model's `column_rules` test, not
    as a test per column: a query on a view computes it again, so one per rule cost most of a build."""
    per_column = [
        node.name
        for node in own_nodes(manifest, "test")
        if getattr(node, "test_metadata", None) and node.test_metadata.name in ("not_null", "accepted_values")
    ]
    assert per_column == []
    rule_tests = [
        node.attached_node
        for node in own_nodes(manifest, "test")
        if getattr(node, "test_metadata", None) and node.test_metadata.name == "column_rules"
    ]
    assert sorted(rule_tests) == sorted(set(rule_tests)), "one column_rules test per model"
    assert len(rule_tests) >= len(CORE_TABLES)


def test_quarantine_reasons_in_yaml_are_the_python_ones(manifest: Any) -> None:
    accepted = [
        node.test_metadata.kwargs["columns"]["reason"]["accepted_values"]
        for node in own_nodes(manifest, "test")
        if getattr(node, "test_metadata", None)
        and node.test_metadata.name == "column_rules"
        and node.attached_node == f"model.{PROJECT}.cdc_quarantine"
    ]
    assert len(accepted) == 1
    assert sorted(accepted[0]) == sorted(QUARANTINE_REASONS)


def test_every_macro_and_argument_is_documented(manifest: Any) -> None:
    undocumented = []
    for macro in manifest.macros.values():
        if macro.package_name != PROJECT:
            continue
        if not macro.description.strip():
            undocumented.append(macro.name)
        undocumented += [f"{macro.name}({argument.name})" for argument in macro.arguments if not argument.description]
    assert undocumented == []
