"""`cdc-dbt`: dbt in the same process as a SparkSession with the project's UDFs.

usage:
  cdc-dbt build [dbt flags]        any dbt command (run, test, docs generate, ...), run on the
                                   embedded Spark, or on SPARK_MASTER_URL's cluster
  cdc-dbt sql "<Spark SQL>"        one query; each result row printed as one JSON object per line
  cdc-dbt debug [--connection]     the folders, Java, the warehouse's state and the project, at
                                   once; --connection also starts Spark for dbt's connection check
  cdc-dbt serve [--host H --allow-remote]
                                   a warm Spark Thrift (HiveServer2) server on 127.0.0.1:CDC_SERVER_PORT;
                                   while it runs, sql and dbt commands on its warehouse run in it
  cdc-dbt land <topic> ... | --pattern '<regex>'
                                   land the records of Kafka topics not landed before into
                                   CDC_LANDING_DIR, for the next build (land --help)
  cdc-dbt scaffold <source_table> [--connector C] [--folder F] [--name N] [--force]
                                   write a typed mart for a landed table under models/marts/, with
                                   types from what landed; starts no Spark (scaffold --help)
  cdc-dbt scaffold --check | --update <source_table> | --all
                                   compare typed marts with what landed since (1 when behind), or
                                   add the new columns and widen the types in their YAML
  cdc-dbt forget <source_table> '<row_key JSON>' ['<row_key JSON>' ...] [--source-db DB]
                                   erase rows from every table and withhold their landed records
                                   from every later build; lists the landed files that still hold
                                   them (forget --help)
  cdc-dbt --version | --help

environment (each optional):
  CDC_LANDING_DIR     folder of landed files, read recursively      (default: demo/landing)
  CDC_WAREHOUSE_DIR   table data and metastore of the warehouse     (default: .warehouse)
  CDC_SCHEMA          the Spark database of the output tables       (default: cdc)
  CDC_TABLE_FORMAT    delta, iceberg, or parquet without Maven      (default: delta)
  SPARK_MASTER_URL    a Spark cluster, e.g. spark://host:7077       (default: embedded local[*])
  CDC_SHUFFLE_PARTITIONS  spark.sql.shuffle.partitions              (default: 8)
  CDC_SERVER_PORT     the warm server's port                        (default: 10000)
  CDC_SKIP_UNCHANGED  false: build/run even when nothing changed    (default: true)
  CDC_SCHEMA_REGISTRY_URL  the Schema Registry of Avro topics        (default: none)
  CDC_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO  its user:password       (default: none)
"""

import contextlib
import difflib
import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from cdc_dbt.command_channel import client_environment, run_on_server
from cdc_dbt.json_lines import write_json_lines
from cdc_dbt.serve import ServerAddress, run_sql_on_server, running_server, serve_command
from cdc_dbt.settings import INSTALLED_PROJECT_DIR, Settings, load_settings, table_format_mistake
from cdc_dbt.up_to_date import forget_last_build, is_read_only_statement, run_unless_up_to_date
from cdc_dbt.warehouse_lock import WarehouseInUseError, hold_warehouse

USAGE = __doc__ or ""

LANDING_READERS = ("build", "run")
"""The dbt commands that read the landing folder: a missing one is a mistake, not an empty build."""
WAREHOUSE_FREE_COMMANDS = ("ls", "list", "parse", "deps", "clean")
"""dbt commands that never open a connection (`debug` does: it starts the session to test it)."""
LOCAL_COMMANDS = ("deps", "clean", "debug")
"""dbt commands that run here even while a warm server runs: they install or remove the client's
files, or (`debug` without --connection) report on this machine."""


INTERRUPTED = "interrupted; nothing is lost: run the same command again to finish"

OWN_COMMANDS = ("sql", "serve", "land", "scaffold", "forget")
"""The commands cdc-dbt answers itself; every other command goes to dbt."""
DBT_COMMANDS = (
    "build", "clean", "clone", "compile", "debug", "deps", "docs", "init", "list", "ls", "parse", "retry", "run",
    "run-operation", "seed", "show", "snapshot", "source", "test",
)  # fmt: skip
"""dbt's own commands, as dbt-core's command line names them (a unit test compares the two)."""
DBT_SUBCOMMANDS = {"docs": ("generate", "serve"), "source": ("freshness", "snapshot-freshness")}
"""The commands of dbt's two command groups (`docs generate`, `source freshness`)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    exit_at_interrupt()
    if not args:
        print(USAGE.strip(), file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        print(USAGE.strip())
        return 0
    if args[0] == "--version":
        print(version_line())
        return 0
    mistyped = unknown_command(args)
    if mistyped:
        print(f"cdc-dbt: {mistyped}", file=sys.stderr)
        return 2
    settings = load_settings()
    if args[0] == "scaffold":
        # Not a dbt command: it reads the landed files itself and writes models, with no JVM.
        from cdc_dbt.scaffold.command import main as scaffold

        return scaffold(args[1:], settings)
    if args[0] == "land":
        return land_command(args[1:], settings)
    if args[0] == "forget":
        # Not a dbt command: it erases from the warehouse's tables itself, holding the warehouse.
        from cdc_dbt.forget import main as forget

        return forget(args[1:], settings)
    command = dbt_command(args)
    starts_spark = command == "sql" or needs_spark(args)
    server = running_server(settings) if starts_spark or goes_through_a_server(args) else None
    mistake = (
        table_format_mistake(settings)
        or folder_mistake(command, settings)
        or (unreachable_master(settings.master_url) if starts_spark and not server else None)
    )
    if mistake:
        print(f"cdc-dbt: {mistake}", file=sys.stderr)
        return 2
    if args[0] == "sql" and len(args) != 2:
        print('usage: cdc-dbt sql "<Spark SQL query>"', file=sys.stderr)
        return 2
    if command == "debug":
        print(folders_in_use(settings))
        if not starts_spark and "--config-dir" not in args:
            return debug_without_spark(settings, args)
    # An error's whole message, as main has always said it (land and forget say its first line).
    return run_at_boundary(lambda: run_command(args, settings, server, starts_spark), "cdc-dbt", describe=str)


def run_command(args: list[str], settings: Settings, server: ServerAddress | None, starts_spark: bool) -> int:
    """A command `main` has checked: `serve`, or `sql` or dbt's command through the warm `server`
    when one runs, else here, holding the warehouse when it `starts_spark`."""
    command = dbt_command(args)
    if args[0] == "serve":
        return serve_command(args[1:], settings, lambda dbt_args: run_dbt_in_server(settings, dbt_args))
    if args[0] == "sql" and not is_read_only_statement(args[1]):
        forget_last_build(settings.warehouse_dir)  # the next build runs, whatever the statement changed
    if server:
        print(f"cdc-dbt: through the warm server at {server.host}:{server.port} (cdc-dbt serve)", file=sys.stderr)
        return run_sql_on_server(server, args[1]) if args[0] == "sql" else run_dbt_on_server(server, settings, args)
    # Held until this process ends: the warehouse's metastore admits one process.
    _lock = hold_warehouse(settings.warehouse_dir, command) if starts_spark else None
    if args[0] == "sql":
        return run_sql(settings, args[1])
    return run_unless_up_to_date(
        settings, command, args, os.environ, lambda: run_dbt(settings, args), records_wait=records_wait(settings)
    )


def unknown_command(args: list[str]) -> str | None:
    """What is wrong when `args` name no command of cdc-dbt or dbt (`biuld`, `docs genrate`): the
    word, and the nearest command or, with none near, every command; None when the command is
    known. Said before anything starts: dbt would otherwise be loaded and the JVM started first."""
    command = dbt_command(args)
    if command.startswith("-"):
        return None  # options only (`--warn-error`): dbt answers those
    known: Sequence[str] = (*DBT_COMMANDS, *OWN_COMMANDS)
    what = f"{command!r} is not a command of cdc-dbt or dbt"
    following = args[args.index(command) + 1 :]
    if command in DBT_SUBCOMMANDS and following and not following[0].startswith("-"):
        group, command, known = command, following[0], DBT_SUBCOMMANDS[command]
        what = f"{command!r} is not a command of dbt {group}"
    if command in known:
        return None
    nearest = difflib.get_close_matches(command, known, n=1, cutoff=0.6)
    if nearest:
        return f"{what}: did you mean {nearest[0]!r}? (cdc-dbt --help)"
    return f"{what}: the commands are {', '.join(sorted(known))} (cdc-dbt --help)"


def land_command(args: list[str], settings: Settings) -> int:
    """`cdc-dbt land`: Spark's Kafka source into the landing folder (cdc_dbt/land.py, which holds the
    warehouse once its arguments are checked: the warehouse's table keeps the offsets landed)."""
    from cdc_dbt.land import main as land

    mistake = None if {"-h", "--help"} & set(args) else table_format_mistake(settings)
    if mistake:
        print(f"cdc-dbt: {mistake}", file=sys.stderr)
        return 2
    # A warehouse held by another process is said as main says it (`cdc-dbt: the warehouse ...`).
    return run_at_boundary(lambda: land(args, settings), "cdc-dbt land", in_use_prefix="cdc-dbt")


def one_line(error: BaseException) -> str:
    """The first line of an error's message (of the Java exception, for an error py4j raises: its
    own first line names only the method called), or its type's name."""
    java_exception = getattr(error, "java_exception", None)
    text = str(java_exception.toString() if java_exception is not None else error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def run_at_boundary(
    run: Callable[[], int],
    prefix: str,
    *,
    describe: Callable[[BaseException], str] = one_line,
    mistakes: tuple[type[Exception], ...] = (),
    in_use_prefix: str | None = None,
) -> int:
    """`run()`, a command's work, at the CLI boundary: an error it raises becomes one line on stderr,
    `<prefix>: <message>`, and an exit status instead of a stack trace. 3 when another process holds
    the warehouse (after `in_use_prefix` if given), 2 for one of `mistakes` (the user's), 1 for any
    other error, said by `describe`."""
    try:
        return run()
    except WarehouseInUseError as error:
        print(f"{in_use_prefix or prefix}: {error}", file=sys.stderr)
        return 3
    except mistakes as error:
        print(f"{prefix}: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - the CLI boundary: one clear line, not a stack trace
        print(f"{prefix}: {describe(error)}", file=sys.stderr)
        return 1


def version_line() -> str:
    """This package's version and the versions of what it runs on, without starting anything."""
    versions = {name: metadata.version(name) for name in ("cdc-dbt", "dbt-core", "dbt-spark", "pyspark")}
    return f"cdc-dbt {versions.pop('cdc-dbt')} ({', '.join(f'{name} {v}' for name, v in versions.items())})"


def exit_at_interrupt() -> None:
    """Make Ctrl-C (SIGINT) end the process at once with one line and status 130.

    Raised as KeyboardInterrupt inside a py4j call, it would print tracebacks of reentrant calls
    while PySpark cancels its jobs. Ending at once is safe: a build killed at any point is
    completed by the next one (tests/integration/test_interrupted_builds.py), and the JVM ends
    when this process does (it exits when its stdin, a pipe from here, closes). Installed again
    after the SparkSession starts, as PySpark installs its own handler.
    """

    def interrupted(signal_number: int, frame: FrameType | None) -> NoReturn:
        sys.stdout.flush()
        stop_resource_tracker()
        print(f"cdc-dbt: {INTERRUPTED}", file=sys.stderr, flush=True)
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


def stop_resource_tracker() -> None:
    """Stop multiprocessing's resource tracker (dbt's thread pools start one) before exiting at
    once: left to find its parent gone, it would print a warning about leaked semaphores, in the
    terminal that pressed Ctrl-C. (Linux unlinks them at creation: nothing is left behind.)"""
    from multiprocessing import resource_tracker

    tracker_pid = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
    if tracker_pid:
        with contextlib.suppress(OSError):
            os.kill(tracker_pid, signal.SIGKILL)


def folders_in_use(settings: Settings) -> str:
    """What `cdc-dbt debug` says before dbt's checks: which folders and which Spark this command uses."""

    def state(path: Path, missing: str) -> str:
        return f"{path}" if path.is_dir() else f"{path} ({missing})"

    return "\n".join(
        (
            f"cdc-dbt project folder: {settings.project_dir}",
            f"cdc-dbt landing folder: {state(settings.landing_dir, 'does not exist: set CDC_LANDING_DIR')}",
            f"cdc-dbt warehouse:      {state(settings.warehouse_dir, 'not built yet: the first build creates it')}",
            f"cdc-dbt Spark master:   {settings.master_url or 'embedded (local[*]); SPARK_MASTER_URL names a cluster'}",
            f"cdc-dbt table format:   {settings.table_format} (CDC_TABLE_FORMAT)",
        )
    )


def debug_without_spark(settings: Settings, args: list[str]) -> int:
    """`cdc-dbt debug`: what needs no JVM (Java, who holds the warehouse, the project parsed by
    dbt); starting Spark for dbt's connection check takes tens of seconds, so only on request."""
    import subprocess

    from dbt.cli.main import dbtRunner
    from dbt.contracts.graph.manifest import Manifest

    from cdc_dbt.session import find_java
    from cdc_dbt.warehouse_lock import warehouse_holder

    java_path = find_java()
    java = subprocess.run([java_path, "-version"], capture_output=True, text=True) if java_path else None
    java_line = java.stderr.splitlines()[0] if java and java.stderr else "not found: Spark needs Java 17 or newer"
    print(f"cdc-dbt Java:           {java_line}")
    print(f"cdc-dbt warehouse held: {warehouse_holder(settings.warehouse_dir) or 'no (free)'}")
    os.environ.setdefault("DBT_TARGET", "local")
    parsed = dbtRunner().invoke(["parse", "--quiet", *args[1:], *_default_dirs(args, settings)])
    manifest = parsed.result
    if not parsed.success or not isinstance(manifest, Manifest):
        print("cdc-dbt dbt project:    does not parse (dbt's error above)")
        return 1
    kinds = [getattr(node, "resource_type", None) for node in manifest.nodes.values()]
    print(
        f"cdc-dbt dbt project:    parses: {kinds.count('model')} models, {kinds.count('test')} data tests,"
        f" {len(manifest.unit_tests)} unit tests"
    )
    print("cdc-dbt Spark session:  not started by this check; `cdc-dbt debug --connection` starts it (tens of seconds)")
    return 0


def folder_mistake(command: str, settings: Settings) -> str | None:
    """A folder the command needs that does not exist, said before any JVM starts; else None.

    A build creates its warehouse but never its landing folder: a mistyped CDC_LANDING_DIR would
    otherwise build empty and end green. A query never creates a warehouse: a mistyped
    CDC_WAREHOUSE_DIR would otherwise answer TABLE_OR_VIEW_NOT_FOUND from a new, empty one.
    """
    if command in LANDING_READERS and not settings.landing_dir.is_dir():
        return f"the landing folder {settings.landing_dir} does not exist (CDC_LANDING_DIR)"
    if command == "sql" and not settings.was_built:
        return (
            f"no warehouse at {settings.warehouse_dir} (CDC_WAREHOUSE_DIR): run `cdc-dbt build` first,"
            " or point CDC_WAREHOUSE_DIR at an existing one"
        )
    return None


def unreachable_master(master_url: str | None, timeout_seconds: float = 5.0) -> str | None:
    """For a standalone master (`spark://host:port`, several for HA), what failed when none of them
    accepts a connection; else None. Spark itself would retry for a minute, then fail in dozens of
    py4j lines that never name the URL."""
    if not master_url or not master_url.startswith("spark://"):
        return None
    failures = []
    for address in master_url.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=timeout_seconds).close()
            return None
        except (OSError, ValueError) as error:
            failures.append(f"{address}: {getattr(error, 'strerror', None) or error}")
    return f"cannot reach the Spark master {master_url} (SPARK_MASTER_URL): {'; '.join(failures)}"


def needs_spark(args: list[str]) -> bool:
    """Whether this dbt command touches the warehouse. Listing, parsing, installing packages,
    `debug` (but for `debug --connection`) and any `--help` read only the project's files: they
    answer without a JVM."""
    command = dbt_command(args)
    if command == "debug" and "--connection" not in args:
        return False
    return command not in WAREHOUSE_FREE_COMMANDS and not {"-h", "--help"} & set(args)


def goes_through_a_server(args: list[str]) -> bool:
    """Whether a dbt command runs in the warm server when one holds the warehouse: every command
    but --help and LOCAL_COMMANDS (`debug --connection` does, to check the server's session)."""
    command = dbt_command(args)
    if {"-h", "--help"} & set(args) or command in ("sql", "serve", "scaffold", "forget"):
        return False
    return command not in LOCAL_COMMANDS or (command == "debug" and "--connection" in args)


DBT_GLOBAL_OPTIONS_WITH_VALUE = (
    "--log-level", "--log-level-file", "--log-format", "--log-format-file", "--log-path", "--warn-error-options",
    "--printer-width",
)  # fmt: skip
"""dbt's options before the command that take a value (`--log-level debug build`)."""


def dbt_command(args: list[str]) -> str:
    """The dbt command among `args`, after any of dbt's global flags (`--warn-error parse`) and
    options with their values (`--log-level debug build`)."""
    takes_value = False
    for arg in args:
        if not arg.startswith("-") and not takes_value:
            return arg
        takes_value = arg in DBT_GLOBAL_OPTIONS_WITH_VALUE
    return args[0]


def run_dbt(settings: Settings, args: list[str], callbacks: Sequence[Callable[[Any], None]] = ()) -> int:
    """dbt `args` in this process, on its SparkSession when the command needs one. `callbacks`
    receive each of dbt's events (the demo prints its progress from them)."""
    if needs_spark(args):
        from cdc_dbt.recovery import remove_orphaned_table_folders
        from cdc_dbt.session import build_session

        spark = build_session(settings)
        exit_at_interrupt()
        remove_orphaned_table_folders(spark, settings.schema)
    return invoke_dbt(settings, args, callbacks)


def run_dbt_on_server(server: ServerAddress, settings: Settings, args: list[str]) -> int:
    """dbt `args` in the warm server's process (cdc_dbt/command_channel.py), with this command's
    landing folder, schema, project and working folder."""
    if not server.commands:
        print(
            "cdc-dbt: this warm server runs no dbt commands (an older cdc-dbt): restart `cdc-dbt serve`",
            file=sys.stderr,
        )
        return 2
    settings_environment = {
        "CDC_LANDING_DIR": str(settings.landing_dir),
        "CDC_SCHEMA": settings.schema,
        "CDC_SKIP_UNCHANGED": os.environ.get("CDC_SKIP_UNCHANGED", "true"),
    }
    return run_on_server(server.commands, args, client_environment(settings_environment, dict(os.environ)))


def run_dbt_in_server(server_settings: Settings, args: list[str]) -> int:
    """A client's dbt command inside the warm server, whose session is already built: the settings
    are the client's (its environment and folder are in place), the warehouse the server's."""
    settings = replace(
        load_settings(),
        warehouse_dir=server_settings.warehouse_dir,
        master_url=server_settings.master_url,
        table_format=server_settings.table_format,
    )
    from dbt_common.events.functions import get_capture_stream

    def say(line: str) -> None:  # to the client, as dbt's console output goes (command_channel.py)
        print(line, file=get_capture_stream() or sys.stdout, flush=True)

    return run_unless_up_to_date(
        settings,
        dbt_command(args),
        args,
        os.environ,
        lambda: invoke_dbt(settings, args),
        say,
        records_wait=records_wait(settings),
    )


def records_wait(settings: Settings) -> Callable[[], bool]:
    """Whether the warehouse's records wait for the Schema Registry, asked of the session the build
    ran in: then it writes no stamp, so the next build, even with nothing new, retries them."""

    def ask() -> bool:
        from pyspark.sql import SparkSession

        # Asked after a build or run succeeded: the session it ran in is this process's.
        return records_waiting_for_registry(SparkSession.builder.getOrCreate(), settings.schema) > 0

    return ask


def records_waiting_for_registry(spark: Any, schema: str) -> int:
    """The records of `schema`'s int_records_parsed held for the Schema Registry; 0 where it has
    none (a build of another project, of selected models only)."""
    from udfs.schema_registry import RETRYABLE_REASONS

    reasons = ", ".join(f"'{reason.value}'" for reason in sorted(RETRYABLE_REASONS))
    query = f"select count(*) from `{schema}`.`int_records_parsed` where reason in ({reasons})"
    try:
        return int(spark.sql(query).collect()[0][0])
    except Exception:  # noqa: BLE001 - no such table, or it cannot be read: then nothing waits here
        return 0


def invoke_dbt(settings: Settings, args: list[str], callbacks: Sequence[Callable[[Any], None]] = ()) -> int:
    """dbtRunner on `args`, with the settings the project reads from the environment."""
    from dbt.cli.main import dbtRunner

    # Colour codes only for a terminal: a log file or a CI console gets plain text.
    os.environ.setdefault("DBT_USE_COLORS", "true" if sys.stdout.isatty() else "false")
    # The profile's default target is an error message for plain `dbt` (profiles.yml).
    os.environ.setdefault("DBT_TARGET", "local")
    if leaves_out_unit_tests(args, os.environ):
        os.environ["DBT_EXCLUDE_RESOURCE_TYPES"] = "unit_test"
    if shows_only_what_it_selects(args, os.environ):
        os.environ["DBT_INDIRECT_SELECTION"] = "empty"
    # Models read these through env_var(); resolved here so defaults and overrides agree.
    # CDC_SCHEMA needs no such line: profiles.yml reads it from this process's environment with
    # settings.schema's default, on every target (the warm server's thrift one included).
    os.environ["CDC_LANDING_DIR"] = str(settings.landing_dir)
    os.environ["CDC_WAREHOUSE_DIR"] = str(settings.warehouse_dir)
    os.environ["CDC_TABLE_FORMAT"] = settings.table_format
    if settings.project_dir == INSTALLED_PROJECT_DIR:
        # dbt writes beside its project by default: here that is among the installed packages.
        os.environ.setdefault("DBT_TARGET_PATH", str(Path.cwd() / "target"))
        os.environ.setdefault("DBT_LOG_PATH", str(Path.cwd() / "logs"))
    result = dbtRunner(callbacks=list(callbacks)).invoke([*args, *_default_dirs(args, settings)])
    return 0 if result.success else 1


def leaves_out_unit_tests(args: list[str], environ: Mapping[str, str]) -> bool:
    """Whether this `build` or `test` leaves dbt's unit tests out: by default, as they check the
    models' SQL on fixed inputs, never the landed data (CI runs them, `tests/integration`). A
    command that names unit tests (`--select test_type:unit`), chooses resource types itself, or
    runs where DBT_EXCLUDE_RESOURCE_TYPES is set gets dbt's own behaviour."""
    chooses_types = any(arg.startswith(("--resource-type", "--exclude-resource-type")) for arg in args)
    names_unit_tests = any("unit" in arg for arg in args)
    return (
        dbt_command(args) in ("build", "test")
        and not chooses_types
        and not names_unit_tests
        and "DBT_EXCLUDE_RESOURCE_TYPES" not in environ
    )


def shows_only_what_it_selects(args: list[str], environ: Mapping[str, str]) -> bool:
    """Whether this `show` leaves out the tests attached to what it shows. dbt's `show` selects them
    too (indirect selection), runs their queries and then drops them from what it prints: half of a
    warm `show`'s time, for nothing. A command that chooses (`--indirect-selection`, or
    DBT_INDIRECT_SELECTION in the environment) gets dbt's own behaviour."""
    return (
        dbt_command(args) == "show"
        and not any(arg.startswith("--indirect-selection") for arg in args)
        and "DBT_INDIRECT_SELECTION" not in environ
    )


def run_sql(settings: Settings, query: str) -> int:
    from cdc_dbt.session import build_session

    spark = build_session(settings)
    exit_at_interrupt()
    try:
        rows = spark.sql(query).collect()
    except Exception as error:  # noqa: BLE001 - Spark's analysis and runtime errors alike
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"cdc-dbt sql: {message}", file=sys.stderr)
        return 1
    write_json_lines(row.asDict(recursive=True) for row in rows)
    return 0


def _default_dirs(args: list[str], settings: Settings) -> list[str]:
    """Point dbt at this project unless the user named other folders."""
    extra = []
    if "--project-dir" not in args:
        extra += ["--project-dir", str(settings.project_dir)]
    if "--profiles-dir" not in args:
        extra += ["--profiles-dir", str(settings.profiles_dir)]
    return extra


if __name__ == "__main__":
    sys.exit(main())
