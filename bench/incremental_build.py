"""An incremental build of a 1% batch against the full refresh it replaces.

    python bench/incremental_build.py [--events 200000] [--keys 20000] [--batch-share 0.01]

Generates a Debezium PostgreSQL stream with generator and cuts every partition at the same
share: the first 99% of each partition's records are the history, the newest 1% the batch. In one
SparkSession and one warehouse it then times three `dbt run`s (models only: data tests read whole
tables by design, and are the user's choice to run on every build):

- history: the first build, over the history alone (not compared, printed for scale);
- incremental: the batch lands beside the history and the same schema is built again;
- full refresh: `--full-refresh` of that schema over history and batch together, the baseline.

Then it checks that both builds gave the same `cdc_history`, and prints the times, the ratio
incremental / full refresh, and what the incremental build touched (files read, records parsed,
versions written as a new generation, of how many keys).
"""

import argparse
import shutil
import sys
from pathlib import Path

from _session import product_session, scratch_folder
from dbt_runs import dbt_run, slowest_models
from pyspark.sql import SparkSession

# This checkout's code, and the generator, which lives only in the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator import generate

SCHEMA = "bench_incremental"


def cut_landing(generated: Path, history: Path, batch: Path, batch_share: float) -> int:
    """Each partition's records (files in offset order) split at the same share; return the batch size."""
    batch_records = 0
    for topic_dir in sorted(path for path in generated.iterdir() if path.is_dir()):
        partitions: dict[str, list[Path]] = {}
        for file in sorted(topic_dir.glob("part-*")):
            partitions.setdefault(file.name.split("-")[1], []).append(file)
        for partition, files in partitions.items():
            lines = [line for file in files for line in file.read_text().splitlines(keepends=True)]
            cut = len(lines) - round(len(lines) * batch_share)
            for directory, part in ((history, lines[:cut]), (batch, lines[cut:])):
                if part:
                    target = directory / topic_dir.name / f"part-{partition}.json"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text("".join(part))
            batch_records += len(lines) - cut
    return batch_records


def landed_history_and_batch(work: Path, events: int, keys: int, batch_share: float) -> int:
    """The generated Debezium PostgreSQL stream cut at `batch_share`: its history landed in
    `work/landing/history`, its batch in `work/batch` (to move beside it); the batch's size."""
    generated = work / "generated"
    generate(generated, events=events, keys=keys, seed=11, partitions=3)
    batch_records = cut_landing(generated, work / "landing" / "history", work / "batch", batch_share)
    shutil.rmtree(generated)
    return batch_records


def slowest_models_text(target: Path, count: int = 6) -> str:
    return ", ".join(f"{name} {seconds:.1f}" for name, seconds in slowest_models(target, count))


def history_table(spark: SparkSession) -> list[tuple[object, ...]]:
    return sorted(
        tuple(row)
        for row in spark.sql(
            f"select source_db, source_table, row_key, version, row, valid_from, valid_to, ended_by"
            f" from {SCHEMA}.cdc_history"
        ).collect()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--batch-share", type=float, default=0.01)
    arguments = parser.parse_args()

    with scratch_folder("cdc-bench-incremental-") as work:
        landing = work / "landing"
        batch_records = landed_history_and_batch(work, arguments.events, arguments.keys, arguments.batch_share)
        with product_session(landing, work) as spark:
            target = work / "target"

            history_seconds = dbt_run(landing, target, SCHEMA)
            landed_before = spark.sql(f"select count(*) from {SCHEMA}.int_deliveries_loaded").first()[0]
            shutil.move(work / "batch", landing / "batch")
            incremental_seconds = dbt_run(landing, target, SCHEMA)
            incremental_models = slowest_models_text(target)
            newest_load = f"(select max(loaded_at) from {SCHEMA}.int_deliveries_loaded)"
            files_read, parsed = spark.sql(
                f"select count(distinct landed_file), count(*) from {SCHEMA}.int_deliveries_loaded"
                f" where loaded_at = {newest_load}"
            ).first()
            versions_written, keys_recomputed, versions_held = spark.sql(
                f"select count_if(generation = newest), count(distinct if(generation = newest, row_key, null)),"
                f" count(*) from (select *, max(generation) over () as newest from {SCHEMA}.int_row_events_versioned)"
            ).first()
            incremental_history = history_table(spark)
            full_seconds = dbt_run(landing, target, SCHEMA, "--full-refresh")
            full_models = slowest_models_text(target)
            same = incremental_history == history_table(spark)

            print(f"history: {landed_before:,} records, batch: {batch_records:,} records ({arguments.batch_share:.1%})")
            print(f"first build (history alone):       {history_seconds:8.1f} s")
            print(f"incremental build (batch):         {incremental_seconds:8.1f} s")
            print(f"full refresh (history + batch):    {full_seconds:8.1f} s")
            print(f"incremental / full refresh:        {incremental_seconds / full_seconds:8.3f}")
            print(
                f"incremental build read {files_read} files, {parsed:,} deliveries;"
                f" wrote {versions_written:,} versions of {keys_recomputed:,} keys"
                f" ({versions_written / versions_held:.1%} of the {versions_held:,} rows held)"
            )
            print(f"slowest models, incremental (s): {incremental_models}")
            print(f"slowest models, full refresh (s): {full_models}")
            print(f"same cdc_history as the full refresh: {same}")
            if not same:
                raise SystemExit("the incremental build and the full refresh differ")


if __name__ == "__main__":
    main()
