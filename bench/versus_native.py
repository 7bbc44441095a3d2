"""cdc-dbt against the job a Spark engineer would write by hand (bench/native_baseline.py), in one run.

    python bench/versus_native.py [--events 1000000] [--keys 100000] [--driver-memory 4g]

Generates one Debezium PostgreSQL stream with generator (kcat lines, JsonConverter with
schemas; seed 11, 3 partitions, every kind of event the generator makes: snapshot reads, creates,
updates, TOAST-placeholder updates, deletes with their tombstones, primary-key changes, a truncate
of `inventory.orders`), with the generator's expected final state. No generator option is
restricted: the baseline handles all of these. The stream is measured in two forms: as written,
and without the converter schema (`schemas.enable=false`: every key and payload cut down to its
inner `payload`, transaction topic included; not timed). For each form, as separate processes,
one after the other, each with a driver of `--driver-memory` (`PYSPARK_SUBMIT_ARGS`, as
bench/scale_build.py gives it) and cdc-dbt's log settings (`SPARK_CONF_DIR`):

- native: `bench/native_baseline.py` (`--with-schema` for the first form), Parquet out;
- cdc-dbt: a cold `cdc-dbt run` (models only, no example marts) into an empty warehouse.

Each is timed wall-clock, JVM start included for both. Then it checks that both give the same
current rows, the set of (source_table, row_key, row) with each row compared as parsed JSON, and
that both equal the generator's final state (decoded with the schema; without it, in the values
the source wrote: dates as days, timestamps as microseconds, decimals as base64). It also checks
that both histories hold as many versions ended by each of `u`, `d`, `t` and none. cdc-dbt's rows
are read with `cdc-dbt sql` (JSON lines), the baseline's Parquet with pyarrow.

Prints, per form: events, landed records, native seconds, cdc-dbt seconds and the ratio
cdc-dbt / native; exits non-zero, saying what differs, when any check fails.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cdc_dbt.session import SPARK_CONF_DIR
from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from generator import generate
from generator.inventory import DATE, DECIMAL, MICRO_TIMESTAMP, TABLES, Column, encode_decimal

CDC_DBT = str(Path(sys.executable).parent / "cdc-dbt")
NATIVE_BASELINE = Path(__file__).with_name("native_baseline.py")
SEED = 11
PARTITIONS = 3
RESULTS_QUERY = (
    "select 'current' as kind, source_table, row_key, row, null as ended_by, null as versions from cdc.cdc_current"
    " union all select 'history', null, null, null, ended_by, count(*) from cdc.cdc_history group by ended_by"
)
EXAMPLES = 5
"""How many differing rows a failed check shows."""

State = dict[tuple[str, str], Any]
"""(source_table, row_key) → the row as parsed JSON."""


@dataclass(frozen=True)
class Outcome:
    """One form's two runs and what they built."""

    form: str
    native_seconds: float
    cdc_dbt_seconds: float
    problems: list[str]


def child_environment(driver_memory: str, **settings: str) -> dict[str, str]:
    """This environment without cdc-dbt's, dbt's or Spark's settings, then the same driver and logs for both."""
    inherited = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("CDC_", "DBT_", "SPARK_CONF", "PYSPARK_SUBMIT"))
    }
    return {
        **inherited,
        "PYSPARK_SUBMIT_ARGS": f"--driver-memory {driver_memory} pyspark-shell",
        "SPARK_CONF_DIR": str(SPARK_CONF_DIR),
        **settings,
    }


def timed(what: str, command: list[str], environment: dict[str, str]) -> tuple[float, str]:
    """Run a command to its end; its wall-clock seconds and stdout. A failure ends the benchmark."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=PACKAGE_PROJECT_DIR, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{what} failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return seconds, done.stdout


def strip_converter_schemas(source: Path, target: Path) -> None:
    """The same landing as a connector with `schemas.enable=false` writes it: each key and payload
    is its converter message's inner `payload`; offsets, partitions and everything else unchanged."""
    for path in sorted(source.rglob("*.json")):
        written = target / path.relative_to(source)
        written.parent.mkdir(parents=True, exist_ok=True)
        with path.open("rb") as lines, written.open("wb") as out:
            for line in lines:
                record = orjson.loads(line)
                for field in ("key", "payload"):
                    if record.get(field) is not None:
                        record[field] = orjson.dumps(orjson.loads(record[field])["payload"]).decode()
                out.write(orjson.dumps(record) + b"\n")


def wire_value(column: Column, value: Any) -> Any:
    """A decoded value of the generator's final state as the source wrote it, without a schema to decode it."""
    if value is None or column.logical is None:
        return value
    if column.logical == DATE:
        return (date.fromisoformat(value) - date(1970, 1, 1)).days
    if column.logical == MICRO_TIMESTAMP:
        return (datetime.fromisoformat(value) - datetime(1970, 1, 1)) // timedelta(microseconds=1)
    if column.logical == DECIMAL:
        scale = int(dict(column.parameters)["scale"])
        return encode_decimal(int(Decimal(value).scaleb(scale)))
    raise ValueError(f"no wire form for {column.logical}")


def expected_state(expected_path: Path, with_schema: bool) -> State:
    """The generator's final state, as `cdc_current` holds it in this form."""
    columns = {table.qualified: {column.name: column for column in table.columns} for table in TABLES}
    state: State = {}
    for source_table, rows in json.loads(expected_path.read_text()).items():
        for row_key, row in rows.items():
            if not with_schema:
                row = {name: wire_value(columns[source_table][name], value) for name, value in row.items()}
            state[(source_table, row_key)] = row
    return state


def native_results(output: Path) -> tuple[State, int, Counter[str | None]]:
    """The baseline's current rows, how many rows its current table holds, and its versions counted
    by what ended them."""
    current = pq.read_table(output / "current", columns=["source_table", "row_key", "row"]).to_pylist()
    ended_by = pq.read_table(output / "history", columns=["ended_by"]).column("ended_by").to_pylist()
    state = {(row["source_table"], row["row_key"]): json.loads(row["row"]) for row in current}
    return state, len(current), Counter(ended_by)


def cdc_dbt_results(stdout: str) -> tuple[State, int, Counter[str | None]]:
    """cdc-dbt's current rows, how many rows `cdc_current` holds, and its versions counted by what
    ended them, from `cdc-dbt sql`'s JSON lines."""
    state: State = {}
    rows = 0
    versions: Counter[str | None] = Counter()
    for line in stdout.splitlines():
        if not line.strip():
            continue
        result = json.loads(line)
        if result["kind"] == "current":
            state[(result["source_table"], result["row_key"])] = json.loads(result["row"])
            rows += 1
        else:
            versions[result["ended_by"]] = result["versions"]
    return state, rows, versions


def differences(name: str, state: State, other_name: str, other: State) -> list[str]:
    """What tells two states apart, with a few examples; empty when they are equal."""
    missing = sorted(other.keys() - state.keys())
    extra = sorted(state.keys() - other.keys())
    differing = sorted(key for key in state.keys() & other.keys() if state[key] != other[key])
    found = []
    if missing:
        found.append(f"{len(missing)} rows of {other_name} not in {name}, e.g. {missing[:EXAMPLES]}")
    if extra:
        found.append(f"{len(extra)} rows of {name} not in {other_name}, e.g. {extra[:EXAMPLES]}")
    for key in differing[:EXAMPLES]:
        found.append(f"{key}: {name} {state[key]} but {other_name} {other[key]}")
    if len(differing) > EXAMPLES:
        found.append(f"... {len(differing)} rows differ in all")
    return found


def measure_form(
    form: str, landing: Path, with_schema: bool, expected: State, driver_memory: str, work: Path
) -> Outcome:
    """Both runs over one landing, timed, then their results checked."""
    output, warehouse = work / "native", work / "warehouse"
    native_command = [sys.executable, str(NATIVE_BASELINE), "--landing", str(landing), "--output", str(output)]
    native_command += ["--driver-memory", driver_memory, *(["--with-schema"] if with_schema else [])]
    native_seconds, native_said = timed(f"native baseline ({form})", native_command, child_environment(driver_memory))
    print(f"  {(native_said.strip().splitlines() or ['(the baseline printed nothing)'])[-1]}", flush=True)

    cdc_environment = child_environment(
        driver_memory,
        CDC_LANDING_DIR=str(landing),
        CDC_WAREHOUSE_DIR=str(warehouse),
        DBT_LOG_PATH=str(work / "logs"),
    )
    cdc_dbt_seconds, _ = timed(
        f"cdc-dbt run ({form})", [CDC_DBT, "run", "--target-path", str(work / "target")], cdc_environment
    )
    print(f"  cdc-dbt run: {cdc_dbt_seconds:.1f} s", flush=True)

    _, queried = timed(f"cdc-dbt sql ({form})", [CDC_DBT, "sql", RESULTS_QUERY], cdc_environment)
    cdc_dbt_current, cdc_dbt_rows, cdc_dbt_versions = cdc_dbt_results(queried)
    native_current, native_rows, native_versions = native_results(output)
    problems = [
        f"{name}'s current table holds {rows:,} rows for {len(state):,} keys"
        for name, rows, state in (("native", native_rows, native_current), ("cdc-dbt", cdc_dbt_rows, cdc_dbt_current))
        if rows != len(state)
    ]
    problems += differences("native", native_current, "cdc-dbt", cdc_dbt_current)
    problems += differences("cdc-dbt", cdc_dbt_current, "the generator's final state", expected)
    problems += differences("native", native_current, "the generator's final state", expected)
    if native_versions != cdc_dbt_versions:
        problems.append(f"versions by ended_by: native {dict(native_versions)}, cdc-dbt {dict(cdc_dbt_versions)}")
    if not problems:
        print(
            f"  same {len(native_current):,} current rows in both, equal to the generator's final state;"
            f" versions by ended_by alike: {dict(cdc_dbt_versions)}",
            flush=True,
        )
    return Outcome(form, native_seconds, cdc_dbt_seconds, [f"{form}: {problem}" for problem in problems])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--driver-memory", default="4g")
    arguments = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cdc-bench-native-"))
    try:
        generated, expected_path = work / "generated", work / "expected.json"
        print(f"generating {arguments.events:,} events over {arguments.keys:,} keys (not timed) ...", flush=True)
        summary = generate(
            generated,
            events=arguments.events,
            keys=arguments.keys,
            seed=SEED,
            partitions=PARTITIONS,
            expected_path=expected_path,
        )
        print(summary.line(), flush=True)

        outcomes = []
        print("with the converter schema:", flush=True)
        outcomes.append(
            measure_form(
                "with schema", generated, True, expected_state(expected_path, True), arguments.driver_memory,
                work / "with-schema",
            )
        )  # fmt: skip
        shutil.rmtree(work / "with-schema", ignore_errors=True)
        print("without the converter schema: stripping it (not timed) ...", flush=True)
        schemaless = work / "schemaless"
        strip_converter_schemas(generated, schemaless)
        shutil.rmtree(generated)
        outcomes.append(
            measure_form(
                "without schema", schemaless, False, expected_state(expected_path, False), arguments.driver_memory,
                work / "without-schema",
            )
        )  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"\ndriver memory {arguments.driver_memory}, wall-clock seconds of each process, JVM start included\n")
    print(f"{'form':<16}{'events':>12}{'records':>12}{'native s':>11}{'cdc-dbt s':>11}{'cdc-dbt / native':>18}")
    for outcome in outcomes:
        print(
            f"{outcome.form:<16}{summary.events:>12,}{summary.records:>12,}{outcome.native_seconds:>11.1f}"
            f"{outcome.cdc_dbt_seconds:>11.1f}{outcome.cdc_dbt_seconds / outcome.native_seconds:>17.2f}x"
        )
    problems = [problem for outcome in outcomes for problem in outcome.problems]
    if problems:
        raise SystemExit("the results differ:\n" + "\n".join(problems))


if __name__ == "__main__":
    main()
