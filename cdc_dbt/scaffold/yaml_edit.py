"""`cdc-dbt scaffold --update` writes a mart's YAML back as the user wrote it, but for the changes.

PyYAML reads no comments and would write none back, so the YAML is not dumped again: each change
is made in the text itself, where PyYAML's composer says its node is. A widened type replaces the
text of its `data_type` value; new columns go in after the last column that reads the row, in the
columns list's own indentation. Comments, blank lines, quoting and key order elsewhere stay as
they were, and the result is read back to check it says what was meant.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from cdc_dbt.scaffold.declaration import dump_yaml


class YamlEditError(Exception):
    """The YAML is in a shape these edits do not reach (flow style, aliases): one line."""


@dataclass
class ModelEdit:
    """The changes to one model's columns: new types by column name, new column entries."""

    retype: dict[str, str] = field(default_factory=dict)
    add: list[dict[str, Any]] = field(default_factory=list)


def edit_models_yaml(text: str, edits: Mapping[str, ModelEdit]) -> str:
    """`text` with each model's columns retyped and added to (models by name)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as error:  # two documents in one file, say
        raise YamlEditError(f"it does not read as one YAML document: {str(error).splitlines()[0]}") from error
    replacements: list[tuple[int, int, str]] = []
    for model_name, edit in edits.items():
        columns = _columns_node(root, model_name)
        replacements += _retypes(columns, edit.retype, model_name)
        if edit.add:
            replacements.append(_insertion(text, columns, edit.add))
    for start, end, new in sorted(replacements, key=lambda replacement: replacement[0], reverse=True):
        text = text[:start] + new + text[end:]
    _check(text, edits)
    return text


def _value(node: yaml.Node, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return value_node
    return None


def _columns_node(root: yaml.Node | None, model_name: str) -> yaml.SequenceNode:
    models = _value(root, "models") if root is not None else None
    for model in models.value if isinstance(models, yaml.SequenceNode) else ():
        name = _value(model, "name")
        if isinstance(name, yaml.ScalarNode) and name.value == model_name:
            columns = _value(model, "columns")
            if not isinstance(columns, yaml.SequenceNode) or columns.flow_style:
                raise YamlEditError(f"{model_name}: its columns are not a block list (- name: ...): change it by hand")
            return columns
    raise YamlEditError(f"model {model_name} not found as a block list of models")


def _retypes(columns: yaml.SequenceNode, retype: Mapping[str, str], model_name: str) -> list[tuple[int, int, str]]:
    replacements = []
    for item in columns.value:
        name = _value(item, "name")
        if not isinstance(name, yaml.ScalarNode) or name.value not in retype:
            continue
        data_type = _value(item, "data_type")
        if not isinstance(data_type, yaml.ScalarNode) or data_type.start_mark.index == data_type.end_mark.index:
            raise YamlEditError(f"{model_name}.{name.value}: its data_type is not a plain value: change it by hand")
        replacements.append((data_type.start_mark.index, data_type.end_mark.index, _scalar(retype[name.value])))
    return replacements


def _scalar(value: str) -> str:
    """A value as YAML text: plain where it reads back the same, else double-quoted (JSON's quoting
    is YAML's)."""
    plain = str(yaml.safe_dump(value, default_flow_style=True, width=10_000)).removesuffix("\n...\n").strip()
    return plain if "\n" not in plain else str(yaml.safe_dump(value, default_style='"', width=10_000)).strip()


def _dash(text: str, item: yaml.Node) -> int:
    """The index of the `-` that starts a list item."""
    at: int = item.start_mark.index - 1
    while at >= 0 and text[at] != "-":
        at -= 1
    return at


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _insertion(text: str, columns: yaml.SequenceNode, entries: Sequence[dict[str, Any]]) -> tuple[int, int, str]:
    """Where new columns go, and their text: after the last column that reads the row (`meta`
    with `cdc_field`), before the item that follows it and the comment and blank lines above that
    item; at the end of the list when none follows."""
    items = columns.value
    reading = [index for index, item in enumerate(items) if _reads_row(item)]
    after = reading[-1] if reading else _first_fixed_after(items)
    anchor = items[max(after, 0)] if items else None
    if anchor is None:
        raise YamlEditError("an empty columns list: change it by hand")
    dash = _dash(text, anchor)
    indent = dash - _line_start(text, dash)
    if after + 1 < len(items):
        at = _line_start(text, _dash(text, items[after + 1]))
        while at > 0:
            previous = _line_start(text, at - 1)
            stripped = text[previous:at].strip()
            if stripped and not stripped.startswith("#"):
                break
            at = previous
    else:
        at = _line_start(text, columns.end_mark.index) if columns.end_mark.index < len(text) else len(text)
        while at > 0:
            previous = _line_start(text, at - 1)
            line = text[previous:at]
            stripped = line.strip()
            if stripped and not (stripped.startswith("#") and len(line) - len(line.lstrip()) < indent):
                break
            at = previous
        if at > 0 and text[at - 1] != "\n":
            return at, at, "\n" + _entries_text(entries, indent).rstrip("\n")
    return at, at, _entries_text(entries, indent)


def _reads_row(item: yaml.Node) -> bool:
    meta = _value(item, "meta")
    config_meta = _value(_value(item, "config") or yaml.MappingNode("", []), "meta")
    return _value(meta, "cdc_field") is not None if meta is not None else _value(config_meta, "cdc_field") is not None


def _first_fixed_after(items: Sequence[yaml.Node]) -> int:
    """Without a column reading the row: before `last_op` or `valid_from` (as the scaffold orders
    them), else at the end. The index of the item new columns follow."""
    for index, item in enumerate(items):
        name = _value(item, "name")
        if isinstance(name, yaml.ScalarNode) and name.value in ("last_op", "valid_from"):
            return index - 1
    return len(items) - 1


def _entries_text(entries: Sequence[dict[str, Any]], indent: int) -> str:
    lines = dump_yaml(list(entries)).splitlines()
    return "".join(" " * indent + line + "\n" if line else "\n" for line in lines)


def _check(text: str, edits: Mapping[str, ModelEdit]) -> None:
    """The edited YAML reads back with each change made (else nothing is written)."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise YamlEditError(f"the edited YAML would not parse ({error}): nothing written") from error
    models = {model.get("name"): model for model in document.get("models", []) if isinstance(model, Mapping)}
    for model_name, edit in edits.items():
        columns = {column.get("name"): column for column in models[model_name].get("columns") or []}
        wanted = {**edit.retype, **{entry["name"]: entry["data_type"] for entry in edit.add}}
        for name, data_type in wanted.items():
            if name not in columns or columns[name].get("data_type") != data_type:
                raise YamlEditError(f"{model_name}.{name}: the edit did not read back as {data_type}: nothing written")
