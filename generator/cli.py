"""The generator's command line: `python -m generator --out DIR [--events N] [--keys K]
[--seed S] [--partitions P] [--format kcat|parquet] [--lines-per-file L] [--expected FILE]
[--overwrite] [--demo]`.
"""

import argparse
import sys
from pathlib import Path

from generator.kafka import FORMATS
from generator.landing import generate
from generator.scenario import MIN_KEYS

DEMO_PRESET = {"events": 400, "keys": 120, "partitions": 2}
"""`--demo`: small enough to read, large enough to hold every kind of event."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m generator",
        description="Generate a deterministic Debezium PostgreSQL CDC stream as landed files.",
    )
    parser.add_argument("--out", type=Path, required=True, help="landing directory to write")
    parser.add_argument("--events", type=int, help="row-change events (default 10000)")
    parser.add_argument("--keys", type=int, help="distinct rows (default events / 10)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--partitions", type=int, help="partitions per topic (default 3)")
    parser.add_argument("--format", choices=FORMATS, default="kcat", dest="fmt")
    parser.add_argument("--lines-per-file", type=int, default=50_000)
    parser.add_argument("--expected", type=Path, help="write the oracle (final state) here")
    parser.add_argument("--overwrite", action="store_true", help="replace earlier output")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="the bundled demo: 400 events, 120 keys, 2 partitions, and the Qlik and MongoDB streams",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    preset = DEMO_PRESET if args.demo else {"events": 10_000, "partitions": 3}
    events = args.events if args.events is not None else preset["events"]
    keys = args.keys if args.keys is not None else preset.get("keys", max(MIN_KEYS, events // 10))
    partitions = args.partitions if args.partitions is not None else preset["partitions"]
    try:
        summary = generate(
            args.out,
            events=events,
            keys=keys,
            seed=args.seed,
            partitions=partitions,
            fmt=args.fmt,
            lines_per_file=args.lines_per_file,
            expected_path=args.expected,
            overwrite=args.overwrite,
            other_sources=args.demo,
        )
    except (ValueError, FileExistsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(summary.line())
    return 0
