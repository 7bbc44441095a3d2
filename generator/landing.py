"""`generate`: write a landing of deterministic change streams, and the oracle of their final state.

The main stream is what a Debezium 2.5 PostgreSQL connector named `dbserver1` (JsonConverter with
schemas, `provide.transaction.metadata=true`, tombstones on delete) would publish for the
tutorial `inventory` schema, extended with logical types (`MicroTimestamp`, `Date`, `Decimal`):

1. an initial snapshot (`r` events, one LSN and txId, `source.snapshot` first/true/last);
2. streaming transactions of 1-4 events with BEGIN/END records on `dbserver1.transaction`,
   creates, updates (REPLICA IDENTITY DEFAULT: no before image), TOAST-placeholder updates,
   deletes with their tombstones, primary-key changes and one truncate of `inventory.orders`.

Records are placed on partitions by a stable hash of the key text and written as `kcat -C -J`
JSON lines or as Parquet in the Spark Kafka source schema, streamed file by file, so millions of
events never sit in memory. The same seed always gives byte-identical files. The demo adds the
small Qlik Replicate and Debezium MongoDB streams (`write_other_sources`).
"""

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from generator.inventory import TABLES, TOPICS, Row, canonical_key, decoded_row
from generator.kafka import FORMATS, KcatWriter, Sink
from generator.mongodb import MONGO_COLLECTION, simulate_mongodb
from generator.oracle import State, write_oracle
from generator.postgres import Connector
from generator.qlik import QLIK_TABLE, simulate_qlik
from generator.scenario import Database, Dice, Plan, Workload

OTHER_SOURCES_PARTITIONS = 2
"""Partitions of every topic of the Qlik and MongoDB streams."""


@dataclass
class GenerationSummary:
    """What one `generate` call wrote."""

    out_dir: Path
    fmt: str
    events: int
    """Row-change events (`r`, `c`, `u`, `d`, `t`), snapshot included."""
    keys: int
    """Distinct rows over all tables (every id ever created)."""
    records: int
    """Kafka records written: events, tombstones and transaction metadata."""
    per_topic: dict[str, int]
    per_op: dict[str, int]
    tombstones: int
    transactions: int
    transaction_records: int
    toast_updates: int
    pk_changes: int
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        """The one-line summary the CLI prints."""
        ops = " ".join(f"{op}={self.per_op.get(op, 0)}" for op in ("r", "c", "u", "d", "t"))
        rate = self.events / self.seconds if self.seconds > 0 else 0.0
        return (
            f"wrote {self.events} events ({ops}; toast={self.toast_updates} "
            f"pk_changes={self.pk_changes}) over {self.keys} keys as {self.records} {self.fmt} "
            f"records ({self.tombstones} tombstones, {self.transaction_records} transaction "
            f"records) in {len(self.files)} files under {self.out_dir} "
            f"in {self.seconds:.1f}s ({rate:,.0f} events/s)"
        )


def generate(
    out_dir: Path,
    *,
    events: int,
    keys: int,
    seed: int = 7,
    partitions: int = 3,
    fmt: str = "kcat",
    lines_per_file: int = 50_000,
    expected_path: Path | None = None,
    overwrite: bool = False,
    other_sources: bool = False,
) -> GenerationSummary:
    """Write a Debezium PostgreSQL change stream under `out_dir` and return what was written.

    Layout: `<out_dir>/<topic>/part-<partition>-<NNNNN>.json` (kcat lines) or `.parquet`, at
    most `lines_per_file` records each, for the topics in `TOPICS`. `events` is the number of
    row-change events (snapshot included) and `keys` the number of distinct rows ever created;
    both are met exactly unless `keys` is close to `events`.

    With `expected_path`, also write the oracle: `{"inventory.customers": {"{\\"id\\":1001}":
    {row}, ...}, ...}`, every live row per table after the whole stream, decoded (dates
    `YYYY-MM-DD`, micro timestamps `YYYY-MM-DDTHH:MM:SS.ffffff`, decimals as exact strings).

    With `other_sources`, also write the demo's Qlik and MongoDB streams (kcat lines, see
    `write_other_sources`), their final state in the oracle too.

    Existing part files of these topics under `out_dir` are an error unless `overwrite`, which
    deletes them first (stale files of a bigger earlier run would otherwise be read too).
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    if partitions < 1 or lines_per_file < 1:
        raise ValueError("partitions and lines_per_file must be positive")
    plan = Plan.for_size(events, keys)
    _prepare_out_dir(out_dir, overwrite)
    started = time.perf_counter()
    rng = Dice(seed)
    workload = Workload(rng, plan)
    sink = Sink(out_dir, TOPICS, fmt, partitions, lines_per_file)
    connector = Connector(rng, sink, plan.stream_events)
    try:
        connector.snapshot(*workload.snapshot())
        for transaction in workload.stream():
            connector.transaction(transaction)
    finally:
        sink.close()
    if expected_path is not None:
        state = oracle_state(workload.db)
        if other_sources:
            state |= write_other_sources(out_dir, seed)
        write_oracle(expected_path, state)
    elif other_sources:
        write_other_sources(out_dir, seed)
    per_topic = sink.records_per_topic()
    return GenerationSummary(
        out_dir=out_dir,
        fmt=fmt,
        events=sum(connector.ops.values()),
        keys=sum(live.next_id - live.table.first_id for live in workload.db.live.values()),
        records=sum(per_topic.values()),
        per_topic=per_topic,
        per_op=connector.ops,
        tombstones=connector.tombstones,
        transactions=connector.transactions,
        transaction_records=connector.transaction_records,
        toast_updates=workload.db.toast_updates,
        pk_changes=workload.db.pk_changes,
        files=sorted(sink.files),
        seconds=time.perf_counter() - started,
    )


def _prepare_out_dir(out_dir: Path, overwrite: bool) -> None:
    stale = [path for topic in TOPICS for path in sorted((out_dir / topic).glob("part-*"))]
    if stale and not overwrite:
        raise FileExistsError(f"{out_dir} already holds generated files (use overwrite)")
    for path in stale:
        path.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)


def oracle_state(db: Database) -> dict[str, dict[str, Row]]:
    """Every live row per table, decoded, under its canonical key."""
    return {
        table.qualified: {
            canonical_key(row_id): decoded_row(table, db.live[table.name].rows[row_id])
            for row_id in sorted(db.live[table.name].rows)
        }
        for table in TABLES
    }


def write_other_sources(out_dir: Path, seed: int = 7) -> State:
    """Write the demo's Qlik and MongoDB streams under `out_dir` (one folder per topic, kcat lines).

    Returns their final state, decoded as the row JSON of `cdc_current` holds it, for the oracle.
    """
    rng = random.Random(seed)
    writer = KcatWriter(out_dir, OTHER_SOURCES_PARTITIONS)
    state = {
        QLIK_TABLE: simulate_qlik(rng, writer, employees=12, changes=40),
        MONGO_COLLECTION: simulate_mongodb(rng, writer, reviews=10, changes=40),
    }
    writer.close()
    return state
