"""dbt-project-evaluator's structural rules, checked over the parsed manifest (dbt Hub is out of reach).

Exceptions live in tests/structure_waivers.yml, each with a reason; a waiver the rule no longer
needs fails too, so the file says what is true today.
"""

import os
import re
from collections import defaultdict
from collections.abc import Iterator
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


RULES_WAIVED = {
    "marts_reading_marts",
    "model_fanout",
    "rejoined_through",
    "chained_views",
    "hard_coded_references",
    "unused_sources",
    "timestamps_not_ending_in_ts",
}
"""The rules of tests/structure_waivers.yml, by its section names."""
MODELS_FANOUT_THRESHOLD = 3
"""dbt-project-evaluator's `models_fanout_threshold`: a parent with this many leaf children."""
CHAINED_VIEWS_THRESHOLD = 4
"""The evaluator's `chained_views_threshold` (5 on most adapters, 4 on Trino and Athena): the
stricter one, since Spark plans every view under a query again, at each query."""


def waived(rule: str, key: str = "model") -> set[str]:
    return {waiver[key] for waiver in WAIVERS.get(rule) or []}


def parse(target: Path) -> Any:
    from dbt.cli.main import dbtRunner

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


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return parse(tmp_path_factory.mktemp("parse-target"))


@pytest.fixture(scope="module")
def parquet_manifest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """On Parquet, cdc_current and cdc_history are views too (macros/incremental/cdc_core_table_config.sql)."""
    before = os.environ.get("CDC_TABLE_FORMAT")
    os.environ["CDC_TABLE_FORMAT"] = "parquet"
    try:
        yield parse(tmp_path_factory.mktemp("parse-target-parquet"))
    finally:
        if before is None:
            del os.environ["CDC_TABLE_FORMAT"]
        else:
            os.environ["CDC_TABLE_FORMAT"] = before


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
    marts_reading_marts = set()
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
            if layer(model) == "marts" and layer(parent) == "marts":
                marts_reading_marts.add(model.name)
    assert problems == []
    assert marts_reading_marts - waived("marts_reading_marts") == set(), "marts reading marts without a waiver"
    assert waived("marts_reading_marts") - marts_reading_marts == set(), "waivers no mart needs"


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


def test_every_waiver_gives_its_reason() -> None:
    assert set(WAIVERS) <= RULES_WAIVED, f"unknown rules: {set(WAIVERS) - RULES_WAIVED}"
    for rule, waivers in WAIVERS.items():
        for waiver in waivers or []:
            reason = waiver.get("reason")
            assert isinstance(reason, str) and len(reason.split()) >= 5, (rule, waiver)


class Dag:
    """The project's models and sources and the edges between them; tests are no part of it (as in
    dbt-project-evaluator's int_all_dag_relationships)."""

    def __init__(self, manifest: Any) -> None:
        self.models = {model.unique_id: model for model in own_nodes(manifest, "model")}
        self.sources = {uid: s for uid, s in manifest.sources.items() if s.package_name == PROJECT}
        self.parents = {
            uid: [p for p in model.depends_on.nodes if p in self.models or p in self.sources]
            for uid, model in self.models.items()
        }
        self.children: dict[str, set[str]] = defaultdict(set)
        for uid, parents in self.parents.items():
            for parent in parents:
                self.children[parent].add(uid)

    def name(self, uid: str) -> str:
        source = self.sources.get(uid)
        return f"{source.source_name}.{source.name}" if source else self.models[uid].name

    def is_view(self, uid: str) -> bool:
        return uid in self.models and self.models[uid].config.materialized in ("view", "ephemeral")


def test_no_model_fans_out_to_many_leaves(manifest: Any) -> None:
    """A parent with 3 or more direct children that nothing reads (leaves) often holds logic each
    leaf repeats, which belongs in one model (the evaluator's fct_model_fanout)."""
    dag = Dag(manifest)
    fanning_out = {}
    for parent, children in list(dag.children.items()):
        leaves = sorted(dag.name(child) for child in children if not dag.children[child])
        if len(leaves) >= MODELS_FANOUT_THRESHOLD:
            fanning_out[dag.name(parent)] = leaves
    assert set(fanning_out) - waived("model_fanout") == set(), fanning_out
    assert waived("model_fanout") - set(fanning_out) == set(), "waivers no model needs"


def test_no_model_rejoins_what_its_parent_already_read(manifest: Any) -> None:
    """A parent P read by B and by C, where B's only reader is C: B could be a CTE of C (the
    evaluator's fct_rejoining_of_upstream_concepts). Waived by B, the model in between."""
    dag = Dag(manifest)
    rejoins = {
        dag.name(between): f"{dag.name(parent)} -> {dag.name(between)} -> {dag.name(child)}, and directly"
        for child, parents in dag.parents.items()
        for between in parents
        for parent in dag.parents.get(between, [])
        if parent in parents and dag.children[between] == {child}
    }
    assert set(rejoins) - waived("rejoined_through") == set(), rejoins
    assert waived("rejoined_through") - set(rejoins) == set(), "waivers no model needs"


def longest_chain_of_views(dag: Dag, uid: str) -> list[str]:
    """The longest path of views ending in `uid` (a model of any materialization)."""
    chains = [longest_chain_of_views(dag, parent) for parent in dag.parents.get(uid, []) if dag.is_view(parent)]
    return [*max(chains, key=len, default=[]), dag.name(uid)]


@pytest.mark.parametrize("table_format", ["delta", "parquet"])
def test_no_long_chains_of_views(table_format: str, request: pytest.FixtureRequest) -> None:
    """A model under more than 4 views in a row: each query on it plans them all again (the
    evaluator's fct_chained_views_dependencies). On Parquet the core tables are views as well."""
    manifest = request.getfixturevalue("manifest" if table_format == "delta" else "parquet_manifest")
    dag = Dag(manifest)
    chains = {dag.name(uid): longest_chain_of_views(dag, uid) for uid in dag.models}
    too_long = {name: " -> ".join(chain) for name, chain in chains.items() if len(chain) > CHAINED_VIEWS_THRESHOLD + 1}
    assert set(too_long) - waived("chained_views") == set(), too_long
    assert any(len(chain) > 2 for chain in chains.values()), "no chain of views at all: the check reads nothing"


HARD_CODED_REFERENCE = re.compile(
    r"""(?<!distinct\s)\b(?:from|join)\s+[`"']?\w+[`"']?\.[`"']?\w+[`"']?(?:\.[`"']?\w+[`"']?)?(?=[\s)'"]|$)""",
    re.IGNORECASE,
)
"""`from`/`join` then `schema.table` (or `catalog.schema.table`), quoted or not: the evaluator's
fct_hard_coded_references patterns, and `from {{ var(...) }}`, below."""
FROM_VAR = re.compile(r"\b(?:from|join)\s+\{\{\s*var\s*\(", re.IGNORECASE)


def without_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", re.sub(r"\{#.*?#\}", "", sql, flags=re.DOTALL))


def test_no_hard_coded_references(manifest: Any) -> None:
    """Every relation is a ref() or a source(), in models, data tests and the macros that write SQL
    (the evaluator checks models only)."""
    texts = {f"model {m.name}": m.raw_code for m in own_nodes(manifest, "model")}
    texts |= {f"test {t.name}": t.raw_code for t in own_nodes(manifest, "test")}
    texts |= {f"macro {m.name}": m.macro_sql for m in manifest.macros.values() if m.package_name == PROJECT}
    found = {
        name: HARD_CODED_REFERENCE.findall(without_comments(sql)) + FROM_VAR.findall(without_comments(sql))
        for name, sql in texts.items()
    }
    found = {name: references for name, references in found.items() if references}
    assert set(found) - waived("hard_coded_references") == set(), found
    assert HARD_CODED_REFERENCE.search("select * from cdc.cdc_current where 1 = 1")
    assert HARD_CODED_REFERENCE.search("run_query('select 1 from `cdc_landing`.`kcat_json_lines`')")
    assert not HARD_CODED_REFERENCE.search("select * from {{ ref('cdc_current') }} as rows_of_cdc_current")


def test_every_source_is_read(manifest: Any) -> None:
    """A source no model reads (the evaluator's fct_unused_sources)."""
    dag = Dag(manifest)
    unused = {dag.name(uid) for uid in dag.sources if not dag.children[uid]}
    assert unused - waived("unused_sources", "source") == set()
    assert waived("unused_sources", "source") - unused == set(), "waivers no source needs"


TIMESTAMP_SPELLINGS = ("_at", "_time", "_timestamp")
"""How a timestamp's name ends elsewhere; here it ends in `_ts`."""
LANDED_FORMAT_COLUMNS = {"timestampType"}
"""Columns of a landed file, named by its format (Spark's Kafka source writes the Parquet)."""


def named_columns(manifest: Any) -> Iterator[tuple[str, Any]]:
    """(model or source, column) of every column this project names: a typed mart's column read
    from the row (`meta.cdc_field`) keeps the source's name, and `valid_from` and `valid_to` are SPEC's."""
    for node in [*own_nodes(manifest, "model"), *(s for s in manifest.sources.values() if s.package_name == PROJECT)]:
        for column in node.columns.values():
            meta = {**(column.meta or {}), **((column.config.meta if column.config else None) or {})}
            if "cdc_field" not in meta and column.name not in ("valid_from", "valid_to", *LANDED_FORMAT_COLUMNS):
                yield node.name, column


def test_column_names_are_snake_case_with_is_booleans(manifest: Any) -> None:
    """STYLE: `snake_case`; a boolean starts with `is_` or `has_` (where the YAML types it)."""
    wrong = [
        f"{node}.{column.name}"
        for node, column in named_columns(manifest)
        if not re.fullmatch(r"[a-z][a-z0-9_]*", column.name)
    ]
    wrong += [
        f"{node}.{column.name}"
        for node, column in named_columns(manifest)
        if (column.data_type or "").lower() == "boolean" and not column.name.startswith(("is_", "has_"))
    ]
    assert wrong == []


def test_timestamps_end_in_ts(manifest: Any) -> None:
    """STYLE: a timestamp column's name ends in `_ts`: a typed one, and one named as timestamps are
    elsewhere."""
    wrong = set()
    for _, column in named_columns(manifest):
        is_timestamp = (column.data_type or "").lower().startswith("timestamp")
        if column.name.endswith(TIMESTAMP_SPELLINGS) or (is_timestamp and not column.name.endswith("_ts")):
            wrong.add(column.name)
    assert wrong - waived("timestamps_not_ending_in_ts", "column") == set()
    assert waived("timestamps_not_ending_in_ts", "column") - wrong == set(), "waivers no column needs"
