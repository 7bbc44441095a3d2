"""Names in a scaffolded mart: columns from source fields (safe, unique, clear of the columns every
typed mart has), a source table's namespace and table, and text from the data on one line."""

import re
from collections.abc import Iterable
from pathlib import Path

FIXED_CURRENT_COLUMNS = ("source_db", "row_key", "last_op", "last_changed_ts")
FIXED_HISTORY_COLUMNS = ("source_db", "row_key", "version", "valid_from", "valid_to", "is_current", "ended_by")
RESERVED_NAMES = frozenset(FIXED_CURRENT_COLUMNS + FIXED_HISTORY_COLUMNS)
"""The columns every typed mart has: a row column of the same name gets a suffix instead."""


def safe_identifier(text: str, fallback: str = "column") -> str:
    """A lower-case identifier by the rule `cdc_schema_drift.column_identifier` uses (every
    character other than a letter, digit or underscore becomes `_`, and so does a leading digit)."""
    name = re.sub(r"[^a-z0-9_]", "_", text.lower())
    name = re.sub(r"^[0-9]", "_", name)
    return name or fallback


def column_names(fields: Iterable[str], reserved: Iterable[str] = RESERVED_NAMES) -> dict[str, str]:
    """Each field's column name: its safe identifier, unique. A name already taken (by a fixed
    column, or by an earlier field with the same identifier: `a.b` and `a_b`) gets `_2`, `_3`..."""
    taken = set(reserved)
    names: dict[str, str] = {}
    for source_field in fields:
        base = safe_identifier(source_field)
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}_{number}"
        taken.add(name)
        names[source_field] = name
    return names


def split_source_table(source_table: str) -> tuple[str | None, str]:
    """`inventory.customers` → (`inventory`, `customers`): schema (or db) and table. Split at the
    first dot: a MongoDB collection name may hold dots, a database name may not."""
    namespace, dot, table = source_table.partition(".")
    return (namespace, table) if dot and table else (None, source_table)


def one_line(text: str) -> str:
    """Text from the data (a table or field name may hold any character) on one printable line."""
    return "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)


def shell_word(text: str) -> str:
    """Text as one word of a shell command line, quoted when it needs to be."""
    return text if re.fullmatch(r"[A-Za-z0-9_.\-/]+", text) else "'" + text.replace("'", "'\\''") + "'"


def shown_path(path: Path) -> str:
    """A path as the user typed theirs: relative to the current folder when under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
