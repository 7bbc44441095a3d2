"""`cdc-dbt scaffold <source_table>`: its arguments, the choice of the landed table the user named,
and the writing of the mart's files (all, or none)."""

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from cdc_dbt.scaffold.declaration import mart_files
from cdc_dbt.scaffold.evidence import TableId, read_landing
from cdc_dbt.scaffold.mart import plan_mart
from cdc_dbt.scaffold.names import one_line, safe_identifier, split_source_table
from cdc_dbt.settings import Settings


class ScaffoldError(Exception):
    """A mistake of the user's or a state of the landing that stops the scaffold: one line, exit 2."""


def choose_table(tables: Mapping[TableId, int], wanted: str, connector: str | None, landing_dir: Path) -> TableId:
    """The landed table the user named: exactly, else its only case-insensitive match; with
    `connector` that connector's. Raises ScaffoldError saying what landed instead."""
    names = {name for name, _ in tables}
    if not names:
        raise ScaffoldError(f"no source table has landed in {landing_dir} (CDC_LANDING_DIR)")
    matches = [wanted] if wanted in names else [name for name in names if name.lower() == wanted.lower()]
    if len(matches) > 1:
        raise ScaffoldError(f"{wanted!r} matches {', '.join(sorted(matches))}: name one exactly as it landed")
    if not matches:
        landed = ", ".join(sorted(f"{name} ({c})" for name, c in tables))
        raise ScaffoldError(f"no source table {wanted!r} has landed in {landing_dir}; landed: {landed}")
    connectors = sorted((c for name, c in tables if name == matches[0]), key=str)
    if connector is not None:
        if connector not in connectors:
            raise ScaffoldError(
                f"{matches[0]} was not written by connector {connector!r}; it was by: {', '.join(map(str, connectors))}"
            )
        return matches[0], connector
    if len(connectors) > 1:
        raise ScaffoldError(
            f"{matches[0]} is written by more than one connector ({', '.join(map(str, connectors))}):"
            " name one with --connector"
        )
    return matches[0], connectors[0]


def model_name_clash(models_dir: Path, stem: str, written: Iterable[Path]) -> Path | None:
    """Another model file named `<stem>_current` or `<stem>_history`: dbt needs unique names."""
    targets = {path.resolve() for path in written}
    for suffix in ("_current", "_history"):
        for path in sorted(models_dir.rglob(f"{stem}{suffix}.sql")) if models_dir.is_dir() else ():
            if path.resolve() not in targets:
                return path
    return None


def write_files(files: Mapping[Path, str], force: bool) -> list[Path]:
    """Write all files, or none: an existing one stops everything unless `force`."""
    if not force:
        for path in files:
            if path.exists():
                raise ScaffoldError(f"{_shown(path)} exists: pass --force to overwrite it")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def _shown(path: Path) -> str:
    """A path as the user typed theirs: relative to the current folder when under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _folder(value: str) -> str:
    if not re.fullmatch(r"[a-z0-9_]+(/[a-z0-9_]+)*", value):
        raise argparse.ArgumentTypeError(f"{value!r}: lower-case letters, digits and _, folders separated by /")
    return value


def _stem(value: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a lower-case identifier")
    return value


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdc-dbt scaffold",
        description=(
            "Write a typed mart for a landed source table: models/marts/<folder>/<table>_current.sql,"
            " <table>_history.sql and _<table>__models.yml, with Spark types from the Debezium schema,"
            " else the Qlik metadata, else the JSON values landed. Reads CDC_LANDING_DIR; starts no Spark."
        ),
    )
    parser.add_argument("source_table", help="as cdc_current.source_table names it, e.g. inventory.customers")
    parser.add_argument("--connector", help="the connector that wrote it (cdc_changes.connector), when several did")
    parser.add_argument("--folder", type=_folder, help="under models/marts/ (default: the schema or database)")
    parser.add_argument("--name", type=_stem, help="the models' name stem (default: the table, lower-cased)")
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    return parser


def main(argv: Sequence[str], settings: Settings) -> int:
    """`cdc-dbt scaffold ...`: 0 when written, 2 (one line on stderr) when nothing was."""
    args = argument_parser().parse_args(argv)
    try:
        written = scaffold(settings, args.source_table, args.connector, args.folder, args.name, args.force)
    except ScaffoldError as error:
        print(f"cdc-dbt scaffold: {one_line(str(error))}", file=sys.stderr)
        return 2
    for path in written:
        print(_shown(path))
    print(f"Review the types in {_shown(written[-1])}, then run `cdc-dbt build`.")
    return 0


def scaffold(
    settings: Settings,
    source_table: str,
    connector: str | None = None,
    folder: str | None = None,
    name: str | None = None,
    force: bool = False,
) -> list[Path]:
    """Read the landing, plan the mart, write its files; returns the paths written."""
    if not settings.landing_dir.is_dir():
        raise ScaffoldError(f"the landing folder {settings.landing_dir} does not exist (CDC_LANDING_DIR)")
    reader = read_landing(settings.landing_dir, source_table)
    table_id = choose_table(reader.tables, source_table, connector, settings.landing_dir)
    namespace, table = split_source_table(table_id[0])
    stem = name or safe_identifier(table, "table")
    models_dir = settings.project_dir / "models"
    target = models_dir / "marts" / (folder or safe_identifier(namespace or table, "marts"))
    command = " ".join(["cdc-dbt scaffold", _shell_word(table_id[0]), *_options(table_id[1], connector, folder, name)])
    files = mart_files(plan_mart(reader.evidence[table_id], stem), target, command)
    clash = model_name_clash(models_dir, stem, files)
    if clash is not None:
        raise ScaffoldError(
            f"a model named {clash.stem} exists already ({_shown(clash)}): choose another name with --name"
        )
    return write_files(files, force)


def _options(chosen: str | None, connector: str | None, folder: str | None, name: str | None) -> list[str]:
    options = [f"--connector {_shell_word(str(chosen))}"] if connector else []
    options += [f"--folder {folder}"] if folder else []
    return options + ([f"--name {name}"] if name else [])


def _shell_word(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_.\-/]+", text) else "'" + text.replace("'", "'\\''") + "'"
