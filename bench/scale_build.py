"""How a full build grows with the events: the same stream shape at two sizes, in one run.

    python bench/scale_build.py [--events 1000000] [--keys 100000] [--scale 10] [--driver-memory 4g]

Generates a Debezium PostgreSQL stream with generator at `--events` over `--keys` keys, and
again `--scale` times larger (events and keys, so each key has as many events at both sizes). Each
size is built by its own child process: a fresh JVM with a driver of `--driver-memory` (local mode
runs the executors in the driver, so this is all the heap the build has), one `dbt run` of the
whole project (models only) into an empty warehouse, as a first build or a `--full-refresh` does.
Generating is not timed. The child removes its landing and warehouse before the next size starts.

Prints per size: events, landed records, build seconds, records built per second, the JVM's peak
resident memory, and the slowest models; then the ratio of the two build times against the
ratio of the sizes (the target: the 10x run takes at most 11x the time, in a 4 GiB driver).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SCHEMA = "bench_scale"


@dataclass(frozen=True)
class Measured:
    """One size's build, as the child reports it."""

    events: int
    keys: int
    landed_bytes: int
    generate_seconds: float
    build_seconds: float
    records: int
    versions: int
    current_rows: int
    jvm_peak_rss_bytes: int
    slowest_models: list[tuple[str, float]]

    def report(self) -> str:
        return (
            f"{self.events:>12,} events, {self.keys:,} keys: {self.records:,} records"
            f" ({self.landed_bytes / 1e9:.1f} GB landed, generated in {self.generate_seconds:.0f} s)\n"
            f"{'':14}build {self.build_seconds:8.1f} s, {self.records / self.build_seconds:8,.0f} records/s,"
            f" JVM peak resident {self.jvm_peak_rss_bytes / 2**30:.2f} GiB;"
            f" {self.versions:,} versions, {self.current_rows:,} current rows\n"
            f"{'':14}slowest models (s): " + ", ".join(f"{name} {seconds}" for name, seconds in self.slowest_models)
        )


def build_child(events: int, keys: int, landing_format: str) -> Measured:
    """Generate, build once, measure; runs in the child process whose JVM it starts."""
    from _session import product_session, scratch_folder
    from dbt_runs import dbt_run, slowest_models

    from generator import generate

    with scratch_folder("cdc-bench-scale-") as work:
        landing, target = work / "landing", work / "target"
        started = time.perf_counter()
        generate(landing, events=events, keys=keys, seed=11, partitions=3, fmt=landing_format)
        generate_seconds = time.perf_counter() - started
        landed_bytes = sum(path.stat().st_size for path in landing.rglob("*") if path.is_file())

        with product_session(landing, work) as spark:
            build_seconds = dbt_run(landing, target, SCHEMA)

            counts = spark.sql(
                f"select (select count(*) from {SCHEMA}.int_deliveries_loaded),"
                f" (select count(*) from {SCHEMA}.cdc_history), (select count(*) from {SCHEMA}.cdc_current)"
            ).first()
            assert counts is not None
            records, versions, current_rows = counts
            jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
            measured = Measured(
                events=events,
                keys=keys,
                landed_bytes=landed_bytes,
                generate_seconds=generate_seconds,
                build_seconds=build_seconds,
                records=records,
                versions=versions,
                current_rows=current_rows,
                jvm_peak_rss_bytes=peak_resident_bytes(jvm_pid),
                slowest_models=slowest_models(target, 5),
            )
        return measured


def peak_resident_bytes(pid: int) -> int:
    """The process's high-water mark of resident memory (`VmHWM`), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def measure(events: int, keys: int, landing_format: str, driver_memory: str) -> Measured:
    """One size, in a child process with a fresh JVM of the given driver memory."""
    environment = dict(os.environ, PYSPARK_SUBMIT_ARGS=f"--driver-memory {driver_memory} pyspark-shell")
    command = [sys.executable, __file__, "--child", "--events", str(events), "--keys", str(keys)]
    command += ["--format", landing_format]
    output = subprocess.run(command, env=environment, check=True, capture_output=True, text=True).stdout
    return Measured(**json.loads(output.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--format", choices=("kcat", "parquet"), default="kcat")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()

    if arguments.child:
        print(json.dumps(asdict(build_child(arguments.events, arguments.keys, arguments.format))))
        return

    small = measure(arguments.events, arguments.keys, arguments.format, arguments.driver_memory)
    print(small.report(), flush=True)
    large = measure(
        arguments.events * arguments.scale, arguments.keys * arguments.scale, arguments.format, arguments.driver_memory
    )
    print(large.report())
    ratio = large.build_seconds / small.build_seconds
    record_ratio = large.records / small.records
    print(
        f"build time ratio: {ratio:.2f} for {record_ratio:.2f}x the records"
        f" (target: at most {arguments.scale + 1}x for {arguments.scale}x), driver memory {arguments.driver_memory}"
    )


if __name__ == "__main__":
    main()
