"""The warehouse's Parquet compression: cold builds with snappy (Spark's default) against zstd.

    python bench/parquet_codec.py [--events 300000] [--keys 30000] [--rounds 2]

Generates one Debezium PostgreSQL stream with generator (kcat lines with the JsonConverter
schema), then runs `--rounds` rounds of two cold builds, one per codec, each a separate process
with an empty warehouse: the product's session (`cdc_dbt.session.build_session`) with
`spark.sql.parquet.compression.codec` set, then `dbt run` of the models. Each child reports its
build's seconds, the size of the tables it wrote and a digest of `cdc_history`; the digests must be
equal (the codec changes how the tables are stored, never what they hold). Prints each codec's best
time and its size, and the ratios zstd / snappy.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CODECS = ("snappy", "zstd")
SCHEMA = "bench_codec"


def build(landing: Path, work: Path, codec: str) -> dict[str, object]:
    """In a child: a cold build of `landing` into a new warehouse whose tables `codec` compresses."""
    from _session import bench_settings, product_session
    from dbt_runs import dbt_run, slowest_models
    from model_versions import rows_digest

    with product_session(landing, work, {"spark.sql.parquet.compression.codec": codec}) as spark:
        seconds = dbt_run(landing, work / "target", SCHEMA)
        rows, digest = rows_digest(spark, f"{SCHEMA}.cdc_history")
    tables_dir = bench_settings(landing, work).tables_dir
    table_bytes = sum(path.stat().st_size for path in tables_dir.rglob("*.parquet"))
    return {
        "seconds": seconds,
        "table_mb": table_bytes / 1e6,
        "history": [rows, digest],
        "slowest": slowest_models(work / "target", 4),
    }


def run_child(landing: Path, codec: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"cdc-bench-codec-{codec}-") as scratch:
        output = subprocess.run(
            [sys.executable, __file__, "--child", str(landing), codec, scratch],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    result: dict[str, object] = json.loads(output.splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--keys", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        landing, codec, work = arguments.child
        print(json.dumps(build(Path(landing), Path(work), codec)))
        return 0

    from generator import generate

    with tempfile.TemporaryDirectory(prefix="cdc-bench-codec-") as scratch:
        landing = Path(scratch) / "landing"
        print(f"generating {arguments.events:,} events ...", flush=True)
        generate(landing, events=arguments.events, keys=arguments.keys, seed=11, partitions=3)
        results: dict[str, list[dict[str, object]]] = {codec: [] for codec in CODECS}
        for round_number in range(arguments.rounds):
            for codec in CODECS:
                result = run_child(landing, codec)
                results[codec].append(result)
                print(f"round {round_number + 1}, {codec}: {result['seconds']:.1f} s, slowest {result['slowest']}")

    best = {codec: min(float(run["seconds"]) for run in runs) for codec, runs in results.items()}  # type: ignore[arg-type]
    size = {codec: float(runs[-1]["table_mb"]) for codec, runs in results.items()}  # type: ignore[arg-type]
    print(f"\n{'codec':<8}{'best build s':>14}{'tables MB':>12}")
    for codec in CODECS:
        print(f"{codec:<8}{best[codec]:>14.1f}{size[codec]:>12.1f}")
    print(f"zstd / snappy: build {best['zstd'] / best['snappy']:.2f}, tables {size['zstd'] / size['snappy']:.2f}")
    digests = {json.dumps(run["history"]) for runs in results.values() for run in runs}
    if len(digests) != 1:
        print(f"the codecs' builds hold different histories: {sorted(digests)}", file=sys.stderr)
        return 1
    print("the same cdc_history in every build")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
