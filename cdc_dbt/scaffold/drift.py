"""`cdc-dbt scaffold --check` and `--update`: the typed marts a project declares, each compared with
what has landed for its table (the evidence the scaffold types a new mart by).

A mart is behind what landed when a field has landed that no column of it reads (a column added at
the source), or when a declared type cannot hold what landed (a widened integer, a longer decimal).
Each finding is a `Change`: a column to add, a type to widen (`cdc_dbt.column_types.widen`, the one
place the widening rules live), or a type left as it is because no clean widening holds both.
"""

import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cdc_dbt.column_types import ColumnType, Seen, debezium_type, qlik_type, seen_type, widen, widen_for_seen
from cdc_dbt.scaffold.evidence import TableEvidence
from cdc_dbt.scaffold.mart import field_types
from cdc_dbt.scaffold.names import RESERVED_NAMES, column_names, one_line


@dataclass(frozen=True)
class DeclaredColumn:
    name: str
    data_type: str | None
    source_field: str | None
    """`meta.cdc_field`: the field of the row JSON it reads; None for the columns every mart has."""


@dataclass(frozen=True)
class DeclaredModel:
    """A typed mart as its YAML declares it: a model whose `config.meta` names `cdc_source_table`."""

    path: Path
    name: str
    source_table: str
    connector: str | None
    columns: tuple[DeclaredColumn, ...]


def declared_marts(models_dir: Path) -> list[DeclaredModel]:
    """The typed marts of a project's models folder, by file and order; a YAML file that does not
    parse is skipped, and said."""
    marts = []
    paths = sorted([*models_dir.rglob("*.yml"), *models_dir.rglob("*.yaml")]) if models_dir.is_dir() else []
    for path in paths:
        try:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            print(f"cdc-dbt scaffold: skipped {path}: {one_line(str(error).splitlines()[0])}", file=sys.stderr)
            continue
        models = document.get("models") if isinstance(document, Mapping) else None
        for model in models if isinstance(models, list) else ():
            declared = _declared_model(path, model)
            if declared is not None:
                marts.append(declared)
    return marts


def _declared_model(path: Path, model: Any) -> DeclaredModel | None:
    if not isinstance(model, Mapping) or not isinstance(model.get("name"), str):
        return None
    meta = {**_mapping(model.get("meta")), **_mapping(_mapping(model.get("config")).get("meta"))}
    source_table = meta.get("cdc_source_table")
    if not isinstance(source_table, str) or not source_table:
        return None
    connector = meta.get("cdc_connector")
    columns = []
    for column in model.get("columns") or ():
        if not isinstance(column, Mapping) or not isinstance(column.get("name"), str):
            continue
        column_config = _mapping(column.get("config"))
        field = _mapping(column.get("meta")).get("cdc_field") or _mapping(column_config.get("meta")).get("cdc_field")
        data_type = column.get("data_type")
        columns.append(
            DeclaredColumn(
                column["name"],
                _from_jinja_literal(data_type) if isinstance(data_type, str) else None,
                _from_jinja_literal(field) if isinstance(field, str) else None,
            )
        )
    return DeclaredModel(
        path,
        model["name"],
        _from_jinja_literal(source_table),
        _from_jinja_literal(connector) if isinstance(connector, str) else None,
        tuple(columns),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _from_jinja_literal(text: str) -> str:
    """The name a value renders to: the scaffold writes a name holding `{{` as a Jinja string
    literal (`declaration.jinja_literal`)."""
    match = re.fullmatch(r"\{\{ (\".*\") \}\}", text, flags=re.DOTALL)
    if match is None:
        return text
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return text
    return value if isinstance(value, str) else text


@dataclass(frozen=True)
class Change:
    """One way a model is behind what landed: a field to `add`, a type to `widen`, or one to `keep`
    (no clean widening holds both: `why`)."""

    model: DeclaredModel
    kind: str
    column: str
    source_field: str
    data_type: str
    """The type to declare (`add`, `widen`); the declared one (`keep`)."""
    origin: str
    """Where the landed type came from, in the words of a column's description."""
    declared: str | None = None
    why: str | None = None

    def finding(self) -> str:
        """What `--check` says of it."""
        if self.kind == "add":
            return f"{self.source_words} has landed and is not declared ({self.data_type}: {self.origin})"
        if self.kind == "widen":
            return f"{self.column} is {self.declared}; what landed needs {self.data_type} ({self.origin})"
        return f"{self.column} is {self.declared} and cannot hold what landed ({self.origin}): {self.why}"

    def done(self) -> str:
        """What `--update` says of it."""
        if self.kind == "add":
            return f"added {self.column} {self.data_type}, reading {self.source_words} ({self.origin})"
        if self.kind == "widen":
            return f"widened {self.column} {self.declared} -> {self.data_type} ({self.origin})"
        return (
            f"left {self.column} {self.declared}: what landed ({self.origin}) {self.why};"
            " change it by hand, or pass --widen-to-string"
        )

    @property
    def source_words(self) -> str:
        return f"field `{one_line(self.source_field)}`"


Evidence = ColumnType | Seen


def field_evidence(evidence: TableEvidence, field: str) -> list[Evidence]:
    """What landed says about one field: the type each Debezium row schema and each Qlik table
    version gives it (every version: the history holds the values of each), newest first; the
    values seen only when no schema types the field. A `string` that stands in for a type Spark
    has not (`ColumnType.stand_in`) says nothing a declared type could fail to hold."""
    typed: list[ColumnType] = []
    for row_schema, _ in sorted(evidence.row_schemas.values(), key=lambda entry: -entry[1]):
        if field in row_schema and (column_type := debezium_type(row_schema[field])) is not None:
            typed.append(column_type)
    for table_schema, _ in sorted(evidence.qlik_schemas.values(), key=lambda entry: -entry[1]):
        for column in table_schema.columns:
            if column.name == field and (column_type := qlik_type(column)) is not None:
                typed.append(column_type)
    if typed:
        return [column_type for column_type in typed if not column_type.stand_in]
    return [evidence.seen[field]] if field in evidence.seen else []


@dataclass(frozen=True)
class Verdict:
    data_type: str
    origin: str | None
    """Of the evidence that widened it; None when the type holds what landed."""
    problems: tuple[tuple[str, str], ...]
    """(why, origin) of each landed type no clean widening holds."""


def fold(declared: str, items: Iterable[Evidence], *, to_string: bool = False) -> Verdict:
    """The declared type widened by each item of evidence in turn."""
    target, origin, problems = declared, None, []
    for item in items:
        if isinstance(item, ColumnType):
            widening = widen(target, item.landed_type, to_string=to_string)
            item_origin = item.origin
        else:
            widening = widen_for_seen(target, item, to_string=to_string)
            item_origin = seen_type(item).origin
        if widening.why is not None:
            problems.append((widening.why, item_origin))
        elif widening.data_type != target:
            target, origin = widening.data_type, item_origin
    return Verdict(target, origin, tuple(problems))


def changes_of(model: DeclaredModel, evidence: TableEvidence, *, to_string: bool = False) -> list[Change]:
    """How `model` is behind what landed for its table: its columns whose type does not hold what
    landed, in their order, then the fields no column reads, in the source's order."""
    changes = []
    for column in model.columns:
        if column.source_field is None or column.data_type is None:
            continue
        verdict = fold(column.data_type, field_evidence(evidence, column.source_field), to_string=to_string)
        if verdict.origin is not None:
            changes.append(
                Change(model, "widen", column.name, column.source_field, verdict.data_type, verdict.origin,
                       declared=column.data_type)
            )  # fmt: skip
        for why, origin in verdict.problems:
            changes.append(
                Change(model, "keep", column.name, column.source_field, verdict.data_type, origin,
                       declared=column.data_type, why=why)
            )  # fmt: skip
    declared_fields = {column.source_field for column in model.columns}
    types = {name: column_type for name, column_type in field_types(evidence).items() if name not in declared_fields}
    names = column_names(types, reserved=RESERVED_NAMES | {column.name for column in model.columns})
    for field, column_type in types.items():
        verdict = fold(column_type.data_type, field_evidence(evidence, field), to_string=to_string)
        changes.append(
            Change(model, "add", names[field], field, verdict.data_type, verdict.origin or column_type.origin)
        )
    return changes
