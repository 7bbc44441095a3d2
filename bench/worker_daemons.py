"""PySpark's Python worker daemon against ours (`cdc_dbt.python_worker`), in one run.

    python bench/worker_daemons.py [--events 20000] [--slices 8] [--repeat 3]

A daemon is chosen when a SparkContext starts, so each is measured in its own child process, one
after the other, on the same records: the generator's Debezium PostgreSQL change records (with the
converter schema), cached in Spark in `--slices` slices. Each child prints

- the cost of one Python UDF task beyond a JVM-only task (`parse_throughput.task_overhead_ms`);
- the rate of `cdc_parse_record` over the records, every field written to the `noop` sink.

and the parent prints both side by side with their ratio (ours / PySpark's).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DAEMONS = {"pyspark": "pyspark.daemon", "cdc-dbt": "cdc_dbt.python_worker"}


def child(daemon: str, events: int, slices: int, repeat: int) -> dict[str, float]:
    # Imported here: the parent process never starts Spark.
    from parse_throughput import best_seconds, cached_frame, landed_records, noop_write, task_overhead_ms, udf_parsed
    from pyspark.sql import SparkSession

    from cdc_dbt.session import SPARK_CONF_DIR
    from generator import generate
    from udfs import spark as registration

    os.environ.setdefault("SPARK_CONF_DIR", str(SPARK_CONF_DIR))
    os.environ["PYSPARK_PYTHON"] = sys.executable
    work = Path(tempfile.mkdtemp(prefix="cdc-bench-worker-"))
    try:
        generate(work / "landing", events=events, keys=max(events // 10, 1), seed=5, partitions=2)
        records = landed_records(work / "landing")
        spark = (
            SparkSession.builder.appName("cdc-dbt python worker")
            .master("local[2]")
            .config("spark.python.daemon.module", DAEMONS[daemon])
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        registration.register(spark)
        frame = cached_frame(spark, records, work / "records.parquet", slices)
        parse = noop_write(udf_parsed(frame))
        parse()  # start the workers
        figures = {
            "records": len(records),
            "task_overhead_ms": task_overhead_ms(spark, 40),
            "records_per_s": len(records) / best_seconds(parse, repeat),
        }
        spark.stop()
        return figures
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--slices", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=DAEMONS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(child(arguments.child, arguments.events, arguments.slices, arguments.repeat)))
        return
    figures = {}
    for daemon in DAEMONS:
        output = subprocess.run(
            [sys.executable, __file__, "--child", daemon, *sys.argv[1:]],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        figures[daemon] = json.loads(output.strip().splitlines()[-1])
    print(f"{figures['pyspark']['records']:,} records in {arguments.slices} slices, 2 cores")
    print(f"{'':32} {'pyspark':>10} {'cdc-dbt':>10} {'ratio':>7}")
    rows = (("task_overhead_ms", "Python task beyond a JVM task, ms"), ("records_per_s", "cdc_parse_record, records/s"))
    for name, label in rows:
        ours, theirs = figures["cdc-dbt"][name], figures["pyspark"][name]
        print(f"{label:32} {theirs:10,.0f} {ours:10,.0f} {ours / theirs if theirs else float('nan'):7.2f}")


if __name__ == "__main__":
    main()
