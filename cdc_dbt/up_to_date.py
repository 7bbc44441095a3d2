"""A `build` or `run` with nothing new is answered at once, as `make` answers a target whose inputs
did not change.

Scheduled builds often find nothing landed since the last one, and such a build would still run
every model and data test (tens of seconds) to write nothing and pass the same checks again. After
a `cdc-dbt build` or `run` succeeds, a stamp in the warehouse folder records what it ran on: its
arguments, settings and the variables dbt reads (DBT_*, and those the project names in env_var()),
the landed files, the dbt project's files, the installed cdc-dbt code (each file's path, size and
modification time), and the warehouse's table files it left. The same command
again, while all of that is unchanged, does not start Spark: it says so in one line and exits 0.
Anything changed, and the command runs as usual.

A build that leaves records waiting for the Schema Registry (it did not answer, or none was
configured) writes no stamp: the registry's answer is an input no file shows, and the next build
must retry them even when nothing else changed.

What the stamp cannot see, it does not trust: every other command that may write to the warehouse
(`cdc-dbt sql` with anything but a query, `seed`, `snapshot`, `run-operation`, a build that fails)
removes it first. A change made by a client of the warm server other than `cdc-dbt` (beeline, plain
`dbt --target thrift`) to a table shows in its files; to a view, it does not: `CDC_SKIP_UNCHANGED=false`
turns the check off, and `cdc-dbt build --full-refresh` never skips.
"""

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from cdc_dbt.settings import Settings

STAMP_FILE = "cdc-dbt-build-stamp.json"
TRACKED_COMMANDS = ("build", "run")
"""The commands a stamp records and skips."""
READ_ONLY_COMMANDS = ("test", "show", "compile", "docs", "source", "ls", "list", "parse", "debug", "deps", "clean")
"""dbt commands that leave the warehouse's tables and views as they are (a `test` that stores its
failures writes tables, which the warehouse's files show)."""
READ_ONLY_STATEMENTS = ("select", "with", "show", "describe", "desc", "explain", "values", "table", "(")
"""How a `cdc-dbt sql` statement that only reads begins (after spaces and comments, any case)."""
FULL_REFRESH_FLAGS = ("--full-refresh", "-f")
DISPLAY_VARIABLES = ("DBT_USE_COLORS", "DBT_LOG_", "DBT_PRINTER_WIDTH", "DBT_QUIET", "DBT_SEND_ANONYMOUS_USAGE_STATS")
"""DBT_* variables that change what dbt prints, not what it builds."""
PROJECT_FOLDER_SETTINGS = {
    "model-paths": ["models"],
    "macro-paths": ["macros"],
    "test-paths": ["tests"],
    "seed-paths": ["seeds"],
    "snapshot-paths": ["snapshots"],
    "analysis-paths": ["analyses"],
    "docs-paths": [],
}
"""The folders of a dbt project that its build reads, with dbt's defaults."""
PROJECT_YAML_FILES = ("dbt_project.yml", "packages.yml", "dependencies.yml", "selectors.yml")
ENV_VAR_CALL = re.compile(r"""env_var\(\s*['"]([^'"]+)['"]""")
"""How the project's SQL and YAML read a variable: its value is what the build ran on too."""
SETTINGS_VARIABLES = (
    "CDC_LANDING_DIR",
    "CDC_WAREHOUSE_DIR",
    "CDC_SCHEMA",
    "CDC_TABLE_FORMAT",
    "CDC_SERVER_HOST",
    "CDC_SERVER_PORT",
)
"""Variables the project reads that the stamp has already: as settings, resolved (a default and
the same value written out are one), or only where the warm server listens."""


@dataclass(frozen=True)
class BuildStamp:
    """What a successful build or run ran on, and the warehouse it left."""

    command: list[str]
    inputs: str
    warehouse: str
    finished_at: str


def run_unless_up_to_date(
    settings: Settings,
    command: str,
    args: list[str],
    environ: Mapping[str, str],
    run: Callable[[], int],
    say: Callable[[str], None] = print,
    records_wait: Callable[[], bool] = lambda: False,
) -> int:
    """`run()` the dbt command `args` (whose command is `command`), unless it is a build or run whose
    stamp says nothing changed since it last succeeded (then `say` so); record a new stamp when one
    succeeds and `records_wait()` says no record waits for something a later build may have (the
    Schema Registry)."""
    if {"-h", "--help"} & set(args):
        return run()
    if command not in TRACKED_COMMANDS:
        if command not in READ_ONLY_COMMANDS:
            forget_last_build(settings.warehouse_dir)
        return run()
    recorded_command = without_full_refresh(args)
    inputs = input_fingerprint(settings, recorded_command, environ)
    stamp = read_stamp(settings.warehouse_dir)
    if (
        skips_unchanged(environ)
        and not is_full_refresh(args, environ)
        and stamp is not None
        and stamp.inputs == inputs
        and stamp.warehouse == files_fingerprint([settings.tables_dir])
    ):
        say(
            f"cdc-dbt: nothing to {command}: no landed file, project file or table changed since the same command"
            f" succeeded at {stamp.finished_at} (--full-refresh rebuilds; `cdc-dbt test` runs the data tests again)"
        )
        return 0
    forget_last_build(settings.warehouse_dir)
    status = run()
    if status == 0 and not records_wait():
        write_stamp(
            settings.warehouse_dir,
            BuildStamp(
                command=recorded_command,
                inputs=inputs,
                warehouse=files_fingerprint([settings.tables_dir]),
                finished_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            ),
        )
    return status


def is_read_only_statement(statement: str) -> bool:
    """Whether a `cdc-dbt sql` statement can only read: it starts with a query's keyword. Anything
    else (DDL, insert, set, cache, ...) is taken to write."""
    text = statement.lstrip()
    while text.startswith(("--", "/*")):
        end = text.find("\n") if text.startswith("--") else text.find("*/")
        text = "" if end < 0 else text[end + (1 if text.startswith("--") else 2) :].lstrip()
    first_word = text.split(None, 1)[0].lower() if text else ""
    return first_word.startswith(READ_ONLY_STATEMENTS)


def without_full_refresh(args: list[str]) -> list[str]:
    """A full refresh leaves the tables a plain build of the same files would: one stamp for both."""
    return [arg for arg in args if arg not in FULL_REFRESH_FLAGS]


def is_full_refresh(args: list[str], environ: Mapping[str, str]) -> bool:
    """`--full-refresh`, `-f` or DBT_FULL_REFRESH: always run."""
    return bool(set(FULL_REFRESH_FLAGS) & set(args)) or environ.get("DBT_FULL_REFRESH", "").lower() in ("1", "true")


def skips_unchanged(environ: Mapping[str, str]) -> bool:
    """CDC_SKIP_UNCHANGED, true unless set to false, 0 or no."""
    return environ.get("CDC_SKIP_UNCHANGED", "true").strip().lower() not in ("false", "0", "no")


def input_fingerprint(settings: Settings, command: list[str], environ: Mapping[str, str]) -> str:
    """A digest of what a build's outcome depends on besides the warehouse: its arguments, settings,
    DBT_* variables and those the project reads with env_var(), the landed files, the dbt project's
    files and the installed cdc-dbt code."""
    project = project_paths(settings)
    read_by_project = variables_read(project)
    described = {
        "command": command,
        "settings": {name: str(value) for name, value in asdict(settings).items()},
        "variables": sorted(
            (name, value)
            for name, value in environ.items()
            if (name.startswith("DBT_") and not name.startswith(DISPLAY_VARIABLES) and name != "DBT_FULL_REFRESH")
            or (name in read_by_project and name not in SETTINGS_VARIABLES)
        ),
        "landing": files_fingerprint([settings.landing_dir]),
        "project": files_fingerprint(project),
        "code": files_fingerprint(code_folders()),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def project_paths(settings: Settings) -> list[Path]:
    """The dbt project's files a build reads: its folders as dbt_project.yml names them (dbt's
    defaults otherwise), its installed packages, its own YAML files and the profile."""
    project = settings.project_dir
    try:
        config = yaml.safe_load((project / "dbt_project.yml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        config = {}
    paths = [project / name for name in PROJECT_YAML_FILES]
    paths.append(settings.profiles_dir / "profiles.yml")
    for key, default in PROJECT_FOLDER_SETTINGS.items():
        paths += [project / str(folder) for folder in config.get(key, default) or []]
    paths.append(project / str(config.get("packages-install-path", "dbt_packages")))
    return paths


def variables_read(paths: Iterable[Path]) -> set[str]:
    """The environment variables the project's SQL and YAML name in `env_var('...')`."""
    names: set[str] = set()
    for path in paths:
        files = [path] if path.is_file() else [file for file in path.rglob("*") if file.is_file()]
        for file in files:
            if file.suffix in (".sql", ".yml", ".yaml"):
                names.update(ENV_VAR_CALL.findall(file.read_text(errors="replace")))
    return names


def code_folders() -> list[Path]:
    """The installed parsing core and command (an upgrade or an edit changes what a build does)."""
    import udfs

    return [Path(udfs.__file__).parent, Path(__file__).parent]


def files_fingerprint(paths: Iterable[Path]) -> str:
    """A digest of every file under `paths` (files or folders, recursively): path, size and
    modification time, as the build's own reading of the landing folder identifies a file."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{path}\0".encode())
        for entry in sorted(_file_states(path)):
            digest.update(entry.encode())
    return digest.hexdigest()


def _file_states(path: Path) -> Iterable[str]:
    if path.is_file():
        state = path.stat()
        yield f"\t{state.st_size}\t{state.st_mtime_ns}\n"
        return
    # Linked folders are followed, as Spark follows them when it lists the landing folder.
    for folder, _, files in os.walk(path, followlinks=True):
        if "__pycache__" in folder:
            continue
        for name in files:
            file = Path(folder, name)
            try:
                state = file.stat()
            except OSError:  # gone while listed: the next look sees the change
                continue
            yield f"{file.relative_to(path)}\t{state.st_size}\t{state.st_mtime_ns}\n"


def read_stamp(warehouse_dir: Path) -> BuildStamp | None:
    try:
        return BuildStamp(**json.loads((warehouse_dir / STAMP_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def write_stamp(warehouse_dir: Path, stamp: BuildStamp) -> None:
    """Written whole, then renamed into place: a reader never finds half a stamp."""
    path = warehouse_dir / STAMP_FILE
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(asdict(stamp), indent=2) + "\n")
    partial.replace(path)


def forget_last_build(warehouse_dir: Path) -> None:
    """Remove the stamp: the next build or run runs whatever it finds."""
    (warehouse_dir / STAMP_FILE).unlink(missing_ok=True)
