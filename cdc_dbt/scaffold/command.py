"""`cdc-dbt scaffold <source_table>`: its arguments, the choice of the landed table the user named,
and the writing of the mart's files (all, or none). `--check` and `--update` keep existing marts up
to date with what landed (`check`)."""

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from cdc_dbt.scaffold.check import CheckError, keep_up
from cdc_dbt.scaffold.declaration import mart_files
from cdc_dbt.scaffold.evidence import TableId, read_landing
from cdc_dbt.scaffold.mart import plan_mart
from cdc_dbt.scaffold.names import one_line, safe_identifier, shell_word, shown_path, split_source_table
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
                raise ScaffoldError(f"{shown_path(path)} exists: pass --force to overwrite it")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


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
        usage=(
            "cdc-dbt scaffold <source_table> [--connector C] [--folder F] [--name N] [--force]\n"
            "       cdc-dbt scaffold --check (<source_table> | --all) [--connector C]\n"
            "       cdc-dbt scaffold --update (<source_table> | --all) [--connector C] [--widen-to-string]"
        ),
        description=(
            "Write a typed mart for a landed source table: models/marts/<folder>/<table>_current.sql,"
            " <table>_history.sql and _<table>__models.yml, with Spark types from the Debezium schema,"
            " else the Qlik metadata, else the JSON values landed. With --check, compare the typed marts"
            " already in models/ with what has landed since: exit 1, one line per finding, when a field has"
            " landed that a mart does not declare or a declared type cannot hold what landed (a widened"
            " integer, a longer decimal); 0 when they are up to date. With --update, add those columns and"
            " widen those types in the marts' YAML (never narrowing, never dropping a column; comments and"
            " everything else kept), one line per change. Reads CDC_LANDING_DIR; starts no Spark."
        ),
    )
    parser.add_argument(
        "source_table", nargs="?", help="as cdc_current.source_table names it, e.g. inventory.customers"
    )
    parser.add_argument("--connector", help="the connector that wrote it (cdc_changes.connector), when several did")
    parser.add_argument("--folder", type=_folder, help="under models/marts/ (default: the schema or database)")
    parser.add_argument("--name", type=_stem, help="the models' name stem (default: the table, lower-cased)")
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    keep_up_to_date = parser.add_mutually_exclusive_group()
    keep_up_to_date.add_argument(
        "--check", action="store_true", help="compare the table's typed marts (or --all) with what landed; 1 if behind"
    )
    keep_up_to_date.add_argument(
        "--update", action="store_true", help="add the new columns and widen the types in the marts' YAML"
    )
    parser.add_argument("--all", action="store_true", help="with --check or --update: every typed mart in models/")
    parser.add_argument(
        "--widen-to-string",
        action="store_true",
        help="with --update: where no clean widening holds both types (int and text), declare string",
    )
    return parser


def _usage_mistake(args: argparse.Namespace) -> str | None:
    """A combination of arguments that means nothing: one line."""
    keeping_up = args.check or args.update
    if not keeping_up:
        if args.all or args.widen_to_string:
            return "--all and --widen-to-string go with --check or --update"
        return None if args.source_table else "name the source table to scaffold"
    if args.folder or args.name or args.force:
        return "--folder, --name and --force write a new mart: not with --check or --update"
    if args.widen_to_string and not args.update:
        return "--widen-to-string goes with --update"
    if args.all == bool(args.source_table):
        return "name one source table or --all, not both" if args.all else "name a source table, or --all"
    return None


def main(argv: Sequence[str], settings: Settings) -> int:
    """`cdc-dbt scaffold ...`: 0 when written, 2 (one line on stderr) when nothing was. With
    --check: 0 when the marts are up to date, 1 when behind; with --update, 1 when a type is left
    behind (no clean widening)."""
    args = argument_parser().parse_args(argv)
    mistake = _usage_mistake(args)
    if mistake is not None:
        print(f"cdc-dbt scaffold: {mistake}", file=sys.stderr)
        return 2
    if args.check or args.update:
        try:
            outcome = keep_up(
                settings, args.source_table, args.connector, update=args.update, to_string=args.widen_to_string
            )
        except CheckError as error:
            print(f"cdc-dbt scaffold: {one_line(str(error))}", file=sys.stderr)
            return 2
        for line in outcome.lines:
            print(line)
        return outcome.exit_code
    try:
        written = scaffold(settings, args.source_table, args.connector, args.folder, args.name, args.force)
    except ScaffoldError as error:
        print(f"cdc-dbt scaffold: {one_line(str(error))}", file=sys.stderr)
        return 2
    for path in written:
        print(shown_path(path))
    print(f"Review the types in {shown_path(written[-1])}, then run `cdc-dbt build`.")
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
    command = " ".join(["cdc-dbt scaffold", shell_word(table_id[0]), *_options(table_id[1], connector, folder, name)])
    files = mart_files(plan_mart(reader.evidence[table_id], stem), target, command)
    clash = model_name_clash(models_dir, stem, files)
    if clash is not None:
        raise ScaffoldError(
            f"a model named {clash.stem} exists already ({shown_path(clash)}): choose another name with --name"
        )
    return write_files(files, force)


def _options(chosen: str | None, connector: str | None, folder: str | None, name: str | None) -> list[str]:
    options = [f"--connector {shell_word(str(chosen))}"] if connector else []
    options += [f"--folder {folder}"] if folder else []
    return options + ([f"--name {name}"] if name else [])
