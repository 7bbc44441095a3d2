"""`cdc-dbt scaffold --check` and `--update`: which typed marts, read against the landing once, and
what is said (one line per finding or change) and written.

`--check` exits 1 when a mart is behind what landed (`drift`), 0 when every mart is up to date;
`--update` adds and widens in the YAML (`yaml_edit`), never narrowing or dropping, and exits 1 when
a type it could not widen cleanly is still behind.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cdc_dbt.column_types import ColumnType
from cdc_dbt.scaffold.declaration import row_columns
from cdc_dbt.scaffold.drift import Change, DeclaredModel, changes_of, declared_marts
from cdc_dbt.scaffold.evidence import read_landing
from cdc_dbt.scaffold.mart import Mart, MartColumn
from cdc_dbt.scaffold.names import one_line, shell_word, shown_path
from cdc_dbt.scaffold.yaml_edit import ModelEdit, YamlEditError, edit_models_yaml
from cdc_dbt.settings import Settings


class CheckError(Exception):
    """A usage mistake or a state that stops the check: one line, exit 2."""


@dataclass(frozen=True)
class Outcome:
    lines: list[str]
    exit_code: int


def chosen_marts(settings: Settings, source_table: str | None, connector: str | None) -> list[DeclaredModel]:
    """The marts of `source_table` (exactly as declared, else its only case-insensitive match), or
    every mart when None; with `connector`, that connector's."""
    models_dir = settings.project_dir / "models"
    marts = declared_marts(models_dir)
    if not marts:
        raise CheckError(
            f"no typed mart in {shown_path(models_dir)} (a model whose config.meta names cdc_source_table):"
            " write one with `cdc-dbt scaffold <source_table>`"
        )
    if source_table is not None:
        tables = {mart.source_table for mart in marts}
        matches = [source_table] if source_table in tables else [t for t in tables if t.lower() == source_table.lower()]
        if len(matches) != 1:
            declared = ", ".join(sorted(tables))
            raise CheckError(
                f"{'no' if not matches else 'more than one'} typed mart in {shown_path(models_dir)} reads"
                f" {one_line(source_table)!r}; the marts read: {one_line(declared)}"
            )
        marts = [mart for mart in marts if mart.source_table == matches[0]]
    if connector is not None:
        marts = [mart for mart in marts if mart.connector == connector]
        if not marts:
            of = f"of {one_line(source_table)} " if source_table is not None else ""
            raise CheckError(f"no typed mart {of}reads connector {one_line(connector)!r}")
    return marts


def keep_up(
    settings: Settings,
    source_table: str | None,
    connector: str | None = None,
    *,
    update: bool = False,
    to_string: bool = False,
) -> Outcome:
    """Check (or update) the chosen marts against what landed for their tables."""
    marts = chosen_marts(settings, source_table, connector)
    if not settings.landing_dir.is_dir():
        raise CheckError(f"the landing folder {settings.landing_dir} does not exist (CDC_LANDING_DIR)")
    reader = read_landing(settings.landing_dir, {mart.source_table for mart in marts})
    changes: list[Change] = []
    not_landed: list[DeclaredModel] = []
    for mart in marts:
        evidence = reader.evidence.get((mart.source_table, mart.connector))
        if evidence is None:
            not_landed.append(mart)
        else:
            changes += changes_of(mart, evidence, to_string=to_string)
    if source_table is not None and len(not_landed) == len(marts):
        raise CheckError(f"nothing of {_table_words(marts[0])} has landed in {settings.landing_dir}")
    lines = [
        f"{_models(group)}: not compared: nothing of {_table_words(group[0])} has landed"
        for group in _grouped_models(not_landed)
    ]
    compared = [mart for mart in marts if mart not in not_landed]
    again = f"cdc-dbt scaffold --update {shell_word(source_table) if source_table else '--all'}"
    if not update:
        findings = _grouped(changes, Change.finding)
        lines += findings
        if findings:
            lines.append(f"{len(findings)} finding(s): `{again}` adds the new columns and widens the types.")
            return Outcome(lines, 1)
        lines.append(f"{_marts_words(marts, compared, source_table)} up to date with what landed.")
        return Outcome(lines, 0)
    return _update(changes, lines, _marts_words(marts, compared, source_table))


def _update(changes: list[Change], lines: list[str], marts_words: str) -> Outcome:
    by_file: dict[Path, dict[str, ModelEdit]] = {}
    for change in changes:
        edit = by_file.setdefault(change.model.path, {}).setdefault(change.model.name, ModelEdit())
        if change.kind == "widen":
            edit.retype[change.column] = change.data_type
        elif change.kind == "add":
            edit.add.append(_new_column(change))
    written = []
    for path, edits in by_file.items():
        edits = {name: edit for name, edit in edits.items() if edit.retype or edit.add}
        if not edits:
            continue
        try:
            text = edit_models_yaml(path.read_text(encoding="utf-8"), edits)
        except YamlEditError as error:
            raise CheckError(f"{shown_path(path)}: {one_line(str(error))}") from error
        written.append((path, text))
    for path, text in written:  # all checked first: every file, or none
        path.write_text(text, encoding="utf-8")
    lines += _grouped(changes, Change.done)
    lines += [f"Updated {shown_path(path)}: review it, then run `cdc-dbt build`." for path, _ in written]
    if any(change.kind == "keep" for change in changes):
        return Outcome(lines, 1)
    if not written:
        lines.append(f"{marts_words} up to date with what landed: nothing changed.")
    return Outcome(lines, 0)


def _new_column(change: Change) -> dict[str, object]:
    """A column entry as the scaffold writes it: data_type, description (where the type came from)
    and meta.cdc_field."""
    model = change.model
    column = MartColumn(change.column, change.source_field, ColumnType(change.data_type, change.origin), False)
    (entry,) = row_columns(Mart(model.source_table, model.connector, model.name, (column,)))
    return entry


def _grouped(changes: Sequence[Change], words: Callable[[Change], str]) -> list[str]:
    """One line per change, the models sharing it (a mart's _current and _history) on one line."""
    models: dict[tuple[Path, str], list[DeclaredModel]] = {}
    for change in changes:
        models.setdefault((change.model.path, words(change)), []).append(change.model)
    return [f"{_models(group)}: {text}" for (_, text), group in models.items()]


def _grouped_models(marts: Sequence[DeclaredModel]) -> list[list[DeclaredModel]]:
    groups: dict[tuple[Path, str, str | None], list[DeclaredModel]] = {}
    for mart in marts:
        groups.setdefault((mart.path, mart.source_table, mart.connector), []).append(mart)
    return list(groups.values())


def _models(group: Sequence[DeclaredModel]) -> str:
    return ", ".join(dict.fromkeys(mart.name for mart in group))


def _table_words(mart: DeclaredModel) -> str:
    return f"{one_line(mart.source_table)} ({one_line(str(mart.connector))})"


def _marts_words(marts: Sequence[DeclaredModel], compared: Sequence[DeclaredModel], source_table: str | None) -> str:
    if source_table is not None:
        return f"The typed marts of {one_line(marts[0].source_table)} ({_models(compared)}) are"
    tables = len({(mart.source_table, mart.connector) for mart in compared})
    return f"The typed marts compared ({len(compared)} models of {tables} source tables) are"
