"""The files of a scaffolded mart: `<t>_current.sql` and `<t>_history.sql`, one macro call each, and
`_<t>__models.yml`, the one declaration both read: the columns, their `data_type`, their tests, and
per column the field of the row JSON it reads (`meta.cdc_field`)."""

import json
from pathlib import Path
from typing import Any

import yaml

from cdc_dbt.scaffold.mart import Mart
from cdc_dbt.scaffold.names import one_line
from udfs import qlik


def models_yaml(mart: Mart, command: str) -> str:
    """`_<t>__models.yml`: both models, their contract, grain and column tests, and per column
    the field of the row JSON it reads (`meta.cdc_field`)."""
    header = (
        f"# Typed marts of {one_line(_label(mart, jinja=False))}, written by\n"
        f"#   {one_line(command)}\n"
        "# from what had landed. Review each data_type (and name), then run `cdc-dbt build`.\n"
        "# cdc_dbt.cdc_typed_current() and cdc_dbt.cdc_typed_history() read this declaration; `meta.cdc_field` is\n"
        "# the field of the row JSON a column reads.\n"
    )
    document = {"version": 2, "models": [_current_model(mart), _history_model(mart)]}
    return header + with_options_commented_out(dump_yaml(document))


def dump_yaml(data: Any) -> str:
    """YAML as the scaffold writes it: keys in their order, block lists indented under their key."""
    text: str = yaml.dump(data, Dumper=_IndentedDumper, sort_keys=False, allow_unicode=True, width=110)
    return text


OPTIONS_COMMENTED_OUT = (
    "# cdc_keep_deleted: true  # deleted rows stay, with is_deleted (boolean) and deleted_ts (timestamp): declare both",
    "# cdc_track_history_except_columns: [updated_at]  # a change of only these columns makes no new version",
)
"""The typed marts' options (docs/output-tables.md#typed-mart-options), in the current mart's and
the history mart's `config.meta`, for a user to turn on."""


def with_options_commented_out(body: str) -> str:
    """`body` with each model's option, commented out, after the last line of its `config.meta`."""
    lines, options = body.splitlines(keepends=True), iter(OPTIONS_COMMENTED_OUT)
    written = []
    for line in lines:
        written.append(line)
        if line.lstrip().startswith("cdc_connector:"):
            indent = line[: len(line) - len(line.lstrip())]
            written.append(f"{indent}{next(options)}\n")
    return "".join(written)


class _IndentedDumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML has no type information
    """Block lists indented under their key, as the project's hand-written YAML has them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)


def _table_words(mart: Mart, *, jinja: bool = True) -> str:
    """The source table in a description: on one line, and, unless for a comment, safe from Jinja."""
    table = one_line(mart.source_table)
    return jinja_literal(table) if jinja else table


def _label(mart: Mart, *, jinja: bool = True) -> str:
    table = _table_words(mart, jinja=jinja)
    connector = one_line(mart.connector) if mart.connector else None
    return f"{table} ({jinja_literal(connector) if jinja else connector})" if connector else table


def jinja_literal(text: str) -> str:
    """Text from the data as dbt reads it back: dbt renders YAML values with Jinja (meta, and
    descriptions later), so a name holding `{{`, `{%` or `{#` goes in as a Jinja string literal
    that renders to exactly that name."""
    if not any(marker in text for marker in ("{{", "{%", "{#")):
        return text
    return "{{ " + json.dumps(text) + " }}"


def _model_config(mart: Mart) -> dict[str, Any]:
    return {
        "meta": {
            "cdc_source_table": jinja_literal(mart.source_table),
            "cdc_connector": jinja_literal(mart.connector) if mart.connector else None,
        },
        "contract": {"enforced": True},
    }


FIELDS_LANDED_TEST = {"cdc_dbt.typed_mart_fields_landed": {"config": {"severity": "warn"}}}
"""A declared field no landed row has (a typo after review) is said, not a column of nulls; a
warning, as a table may not have landed yet. On the _current mart: the fields are the same.
The project's generic tests are named with its package name: a user's own dbt project that
installs cdc-dbt as a package finds them only so (and this project too)."""

BEHIND_LANDED_TEST = {"cdc_dbt.typed_mart_behind_landed": {"config": {"severity": "warn"}}}
"""The other direction: a field landed rows have and the mart does not declare (a column added at
the source) is said, with `cdc-dbt scaffold --update`; a warning, once per mart (on _current)."""


def _not_null() -> dict[str, Any]:
    """A column's rules: never null. A new dict each time: yaml.dump writes a shared one as an alias."""
    return {"not_null": True}


def _accepted_values(values: list[str]) -> dict[str, Any]:
    """A column's rules: null or one of `values`."""
    return {"accepted_values": values}


def _with_column_rules(model: dict[str, Any], grain: list[str]) -> dict[str, Any]:
    """The model with its columns' `rules` moved into one `cdc_dbt.column_rules` test, first in its
    data_tests, with its `grain`: one query checks every rule of the model and that no two rows share
    the grain's values. Columns in the order the model lists them."""
    rules = {column["name"]: column.pop("rules") for column in model["columns"] if "rules" in column}
    # Named: dbt would otherwise name the test after all its arguments, hundreds of characters.
    column_rules = {"name": f"column_rules_{model['name']}", "arguments": {"columns": rules, "grain": grain}}
    model["data_tests"] = [{"cdc_dbt.column_rules": column_rules}, *model["data_tests"]]
    return model


def _source_db_column(mart: Mart) -> dict[str, Any]:
    if mart.connector == qlik.CONNECTOR:
        description = "Null: Qlik names the schema and table, never the database."
    else:
        description = "The source database (Debezium `source.db`); with the key, a row's identity."
    return {"name": "source_db", "data_type": "string", "description": description}


def _row_key_column(model: str) -> dict[str, Any]:
    return {
        "name": "row_key",
        "data_type": "string",
        "description": f"Canonical key JSON of the row, as in {model}.",
        "rules": _not_null(),
    }


def row_columns(mart: Mart) -> list[dict[str, Any]]:
    """The columns that read the row, as the scaffold writes them (and `--update` adds them)."""
    columns = []
    for column in mart.columns:
        key_words = "; part of the row key" if column.is_key else ""
        entry: dict[str, Any] = {
            "name": column.name,
            "data_type": jinja_literal(column.column_type.data_type),
            "description": (
                f"`{jinja_literal(one_line(column.source_field))}` of {_table_words(mart)}"
                f" ({column.column_type.origin}){key_words}."
            ),
            "meta": {"cdc_field": jinja_literal(column.source_field)},
        }
        if column.is_key:
            entry["rules"] = _not_null()
        columns.append(entry)
    return columns


def _current_model(mart: Mart) -> dict[str, Any]:
    model = {
        "name": f"{mart.model_stem}_current",
        "description": f"Typed current state of {_label(mart)}: one row per live row, from cdc_current.",
        "config": _model_config(mart),
        "data_tests": [FIELDS_LANDED_TEST, BEHIND_LANDED_TEST],
        "columns": [
            _source_db_column(mart),
            _row_key_column("cdc_current"),
            *row_columns(mart),
            {
                "name": "last_op",
                "data_type": "string",
                "description": "Op of the last event applied (c, r or u).",
                "rules": _accepted_values(["c", "r", "u"]),
            },
            {
                "name": "last_changed_ts",
                "data_type": "timestamp",
                "description": "When the source made that last change.",
            },
        ],
    }
    return _with_column_rules(model, ["source_db", *mart.key_names])


def _history_model(mart: Mart) -> dict[str, Any]:
    model = {
        "name": f"{mart.model_stem}_history",
        "description": (
            f"Typed history (SCD type 2) of {_label(mart)}: one row per version of a row, from cdc_history."
        ),
        "config": _model_config(mart),
        "data_tests": [],
        "columns": [
            _source_db_column(mart),
            _row_key_column("cdc_history"),
            {
                "name": "version",
                "data_type": "int",
                "description": "Version number per key, 1, 2, ... in source order.",
                "rules": _not_null(),
            },
            *row_columns(mart),
            {
                "name": "valid_from",
                "data_type": "timestamp",
                "description": "When this version began: the source_ts of the event that made it.",
            },
            {
                "name": "valid_to",
                "data_type": "timestamp",
                "description": "When this version ended (null while current).",
            },
            {
                "name": "is_current",
                "data_type": "boolean",
                "description": "True for the open version of a live row.",
                "rules": _not_null(),
            },
            {
                "name": "ended_by",
                "data_type": "string",
                "description": "What ended the version: u (replaced), d (deleted), t (truncated); null while current.",
                "rules": _accepted_values(["u", "d", "t"]),
            },
        ],
    }
    return _with_column_rules(model, ["source_db", *mart.key_names, "version"])


CURRENT_SQL = "{{ cdc_dbt.cdc_typed_current() }}\n"
HISTORY_SQL = "{{ cdc_dbt.cdc_typed_history() }}\n"


def mart_files(mart: Mart, folder: Path, command: str) -> dict[Path, str]:
    """The three files of a mart, by path."""
    stem = mart.model_stem
    return {
        folder / f"{stem}_current.sql": CURRENT_SQL,
        folder / f"{stem}_history.sql": HISTORY_SQL,
        folder / f"_{stem}__models.yml": models_yaml(mart, command),
    }
