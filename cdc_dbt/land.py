"""`cdc-dbt land`: the records of Kafka topics not landed before, written into the landing folder
as the Parquet Spark's Kafka source writes (what the build reads), then `cdc-dbt build`.

usage:
  cdc-dbt land <topic> [<topic> ...]     these topics
  cdc-dbt land --pattern '<regex>'       every topic whose whole name matches (Java regex)

environment:
  CDC_KAFKA_BOOTSTRAP_SERVERS   the cluster, e.g. broker1:9092,broker2:9092 (or in the file below)
  CDC_KAFKA_PROPERTIES_FILE     a Java properties file of Kafka client settings (security.protocol,
                                sasl.*, ssl.*, ...), kept outside the project: it holds secrets
  CDC_KAFKA_<SETTING>           any one client setting, dots as underscores, e.g.
                                CDC_KAFKA_SASL_JAAS_CONFIG; wins over the file
  CDC_LANDING_DIR, CDC_WAREHOUSE_DIR, CDC_SCHEMA   as for every command

What is landed is kept, per landing folder, topic and partition, as the next offset to read, in the
table `cdc_landed_offsets` of the warehouse's schema. A land writes its files into a hidden folder
of the landing folder, moves the complete folder into place (one rename), and only then records the
offsets it landed: a land killed at any point loses nothing, and what it may land twice (the files
moved, the offsets not recorded) the build counts once, as it counts every `(topic, partition,
offset)` once. Offsets that retention deleted before they were landed are said, and counted in the
table; a compacted topic's missing offsets are no loss.
"""

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import sys
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_dbt.settings import Settings
from cdc_dbt.warehouse_lock import hold_warehouse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

USAGE = __doc__ or ""
ENVIRONMENT_PREFIX = "CDC_KAFKA_"
PROPERTIES_FILE_VARIABLE = "CDC_KAFKA_PROPERTIES_FILE"
OFFSETS_TABLE = "cdc_landed_offsets"
LANDED_FOLDER = "kafka"
"""Under the landing folder: one folder per land, named by its time and an id."""
STAGING_FOLDER = ".cdc-land-in-progress"
"""Under the landing folder: hidden (Spark lists no file or folder whose name starts with a dot),
so a build never reads a land's files before they are complete."""
CONSUMER_TIMEOUT_SECONDS = 60


class LandError(RuntimeError):
    """A mistake in what `land` was asked to do (no cluster named, no such topic): one line."""


@dataclass(frozen=True)
class PartitionRange:
    """The offsets of one topic partition this land reads: [start, end)."""

    topic: str
    partition: int
    start: int
    end: int
    lost: int
    """Offsets after the last land that retention deleted before this one could read them."""


@dataclass(frozen=True)
class LandedPartition:
    """What a land wrote of one partition."""

    topic: str
    partition: int
    records: int


def main(args: Sequence[str], settings: Settings) -> int:
    """`cdc-dbt land ...`: usage mistakes exit 2 before the warehouse is held or any JVM starts."""
    if not args or args[0] in ("-h", "--help"):
        print(USAGE.strip(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    try:
        selection = topic_selection(args)
        kafka_settings = kafka_client_settings(dict(os.environ))
    except LandError as error:
        print(f"cdc-dbt land: {error}", file=sys.stderr)
        return 2
    from cdc_dbt.session import build_session

    _lock = hold_warehouse(settings.warehouse_dir, "land")  # until this land ends: its metastore admits one process
    spark = build_session(settings, kafka_source=True)
    report = land(spark, settings, selection, kafka_settings)
    for line in report:
        print(f"cdc-dbt land: {line}", file=sys.stderr)
    return 0


@dataclass(frozen=True)
class TopicSelection:
    names: tuple[str, ...] = ()
    pattern: str | None = None


def topic_selection(args: Sequence[str]) -> TopicSelection:
    """Topic names, or `--pattern <regex>` (alone)."""
    if args[0] == "--pattern" or args[0].startswith("--pattern="):
        pattern = args[0].split("=", 1)[1] if "=" in args[0] else (args[1] if len(args) > 1 else "")
        rest = args[1:] if "=" in args[0] else args[2:]
        if not pattern or rest:
            raise LandError("--pattern takes one regex and nothing else: cdc-dbt land --pattern '<regex>'")
        return TopicSelection(pattern=pattern)
    options = [arg for arg in args if arg.startswith("-")]
    if options:
        raise LandError(f"unknown option {options[0]}: cdc-dbt land <topic> ... | --pattern '<regex>' (--help)")
    return TopicSelection(names=tuple(dict.fromkeys(args)))


def kafka_client_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The Kafka client's settings: the properties file CDC_KAFKA_PROPERTIES_FILE names, then each
    CDC_KAFKA_<SETTING> variable over it. `bootstrap.servers` is required."""
    settings: dict[str, str] = {}
    properties_file = environ.get(PROPERTIES_FILE_VARIABLE)
    if properties_file:
        path = Path(properties_file).expanduser()
        if not path.is_file():
            raise LandError(f"{PROPERTIES_FILE_VARIABLE} names {path}, which is no file")
        settings.update(parse_properties(path.read_text()))
    for name, value in environ.items():
        if name.startswith(ENVIRONMENT_PREFIX) and name != PROPERTIES_FILE_VARIABLE and value:
            settings[name.removeprefix(ENVIRONMENT_PREFIX).lower().replace("_", ".")] = value
    if not settings.get("bootstrap.servers"):
        raise LandError(
            "no Kafka cluster named: set CDC_KAFKA_BOOTSTRAP_SERVERS (host:port,...), or bootstrap.servers"
            f" in the file {PROPERTIES_FILE_VARIABLE} names"
        )
    return settings


def parse_properties(text: str) -> dict[str, str]:
    """A Java properties file's `key=value` / `key: value` / `key value` lines; `#` and `!` start
    comments; a line ending in a backslash continues on the next (a JAAS config often does)."""
    properties = {}
    logical_lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not pending else raw.strip()
        if not pending and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending += line[:-1]
            continue
        logical_lines.append(pending + line)
        pending = ""
    if pending:
        logical_lines.append(pending)
    for line in logical_lines:
        match = re.match(r"((?:[^\s=:\\]|\\.)+)\s*[=:\s]\s*(.*)$", line)
        key, value = (match[1], match[2]) if match else (line, "")
        properties[key.replace("\\", "")] = value.strip()
    return properties


def ranges_to_read(
    offsets_held: Mapping[tuple[str, int], tuple[int, int]], next_offsets: Mapping[tuple[str, int], int]
) -> list[PartitionRange]:
    """For each partition (topic, partition) -> (first offset held, next offset to be written), the
    range not landed yet: from the next offset recorded (a new partition: from its first), but not
    below what the partition still holds (the rest was deleted by retention: lost)."""
    ranges = []
    for (topic, partition), (earliest, latest) in sorted(offsets_held.items()):
        recorded = next_offsets.get((topic, partition))
        start = earliest if recorded is None else max(recorded, earliest)
        lost = 0 if recorded is None else max(0, earliest - recorded)
        if start < latest or lost:
            ranges.append(PartitionRange(topic, partition, start, max(start, latest), lost))
    return ranges


def report_lines(
    topics: Sequence[str], ranges: Sequence[PartitionRange], landed: Sequence[LandedPartition], folder: Path | None
) -> list[str]:
    """What a land says: per topic, the records it landed (or none new); per partition whose
    offsets retention deleted unread, how many."""
    lines = []
    for topic in topics:
        records = sum(part.records for part in landed if part.topic == topic)
        partitions = sorted({part.partition for part in landed if part.topic == topic})
        if records:
            lines.append(f"{topic}: {records} records from {len(partitions)} partition(s) into {folder}")
        else:
            lines.append(f"{topic}: nothing new")
    for part in ranges:
        if part.lost:
            lines.append(
                f"{part.topic} partition {part.partition}: {part.lost} offsets (up to {part.start - 1}) were deleted"
                " by the topic's retention before they were landed: they are lost to this warehouse"
            )
    return lines


def land(spark: "SparkSession", settings: Settings, selection: TopicSelection, kafka: dict[str, str]) -> list[str]:
    """Land what `selection` holds beyond the recorded offsets; returns the report's lines."""
    remove_unfinished_lands(settings.landing_dir)
    consumer = KafkaOffsets(spark, kafka)
    try:
        topics = consumer.select_topics(selection)
        offsets_held = consumer.offsets_held(topics)
    finally:
        consumer.close()
    table = offsets_table(spark, settings)
    ranges = ranges_to_read(offsets_held, recorded_next_offsets(spark, table, settings.landing_dir))
    to_read = [part for part in ranges if part.end > part.start]
    landed: list[LandedPartition] = []
    folder = None
    if to_read:
        folder, landed = write_records(spark, settings.landing_dir, kafka, to_read)
    record_offsets(spark, table, settings.landing_dir, ranges, landed, folder)
    return report_lines(topics, ranges, landed, folder)


class KafkaOffsets:
    """Kafka's own Java consumer (the one Spark's Kafka source runs), with the same settings:
    which topics exist, which offsets each partition still holds."""

    def __init__(self, spark: "SparkSession", kafka: Mapping[str, str]) -> None:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        self._jvm = jvm
        properties = jvm.java.util.Properties()
        for name, value in kafka.items():
            properties.setProperty(name, value)
        deserializer = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
        properties.setProperty("key.deserializer", deserializer)
        properties.setProperty("value.deserializer", deserializer)
        properties.setProperty("enable.auto.commit", "false")
        self._consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(properties)
        self._timeout = jvm.java.time.Duration.ofSeconds(CONSUMER_TIMEOUT_SECONDS)

    def select_topics(self, selection: TopicSelection) -> list[str]:
        existing = {str(name) for name in self._consumer.listTopics(self._timeout).keySet()}
        if selection.pattern is not None:
            pattern = self._jvm.java.util.regex.Pattern.compile(selection.pattern)
            chosen = sorted(name for name in existing if pattern.matcher(name).matches() and not name.startswith("__"))
            if not chosen:
                raise LandError(f"no topic matches --pattern {selection.pattern!r}")
            return chosen
        missing = [name for name in selection.names if name not in existing]
        if missing:
            raise LandError(f"no topic named {', '.join(missing)} on the cluster")
        return list(selection.names)

    def offsets_held(self, topics: Iterable[str]) -> dict[tuple[str, int], tuple[int, int]]:
        """(first offset held, next offset to be written) of every partition of `topics`."""
        partitions = self._jvm.java.util.ArrayList()
        for topic in topics:
            for info in self._consumer.partitionsFor(topic, self._timeout):
                partitions.add(self._jvm.org.apache.kafka.common.TopicPartition(topic, info.partition()))
        earliest = self._consumer.beginningOffsets(partitions, self._timeout)
        latest = self._consumer.endOffsets(partitions, self._timeout)
        return {
            (str(part.topic()), int(part.partition())): (int(earliest.get(part)), int(latest.get(part)))
            for part in partitions
        }

    def close(self) -> None:
        self._consumer.close()


def write_records(
    spark: "SparkSession", landing_dir: Path, kafka: Mapping[str, str], ranges: Sequence[PartitionRange]
) -> tuple[Path, list[LandedPartition]]:
    """Read `ranges` with Spark's Kafka source into a hidden folder, move it into place whole."""
    from pyspark.sql import functions as F

    run = f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    staging = landing_dir / STAGING_FOLDER / run
    folder = landing_dir / LANDED_FOLDER / run
    records = (
        spark.read.format("kafka")
        .options(**{f"kafka.{name}": value for name, value in kafka.items()})
        .option("assign", json.dumps(partitions_by_topic(ranges)))
        .option("startingOffsets", json.dumps(offsets_by_topic(ranges, "start")))
        .option("endingOffsets", json.dumps(offsets_by_topic(ranges, "end")))
        .option("includeHeaders", "true")
        # A compacted topic has gaps, and retention may delete records between the offsets asked
        # for above and the read: those are reported from the offsets, not as a failed read.
        .option("failOnDataLoss", "false")
        .load()
        .select("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")
    )
    records.write.parquet(str(staging))
    written = (
        spark.read.parquet(str(staging)).groupBy("topic", "partition").agg(F.count("*").alias("records")).collect()
    )
    folder.parent.mkdir(parents=True, exist_ok=True)
    os.rename(staging, folder)
    with contextlib.suppress(OSError):  # left only while a land is in progress
        staging.parent.rmdir()
    landed = [LandedPartition(row.topic, row.partition, row.records) for row in written]
    return folder, sorted(landed, key=lambda part: (part.topic, part.partition))


def partitions_by_topic(ranges: Sequence[PartitionRange]) -> dict[str, list[int]]:
    assigned: dict[str, list[int]] = {}
    for part in ranges:
        assigned.setdefault(part.topic, []).append(part.partition)
    return assigned


def offsets_by_topic(ranges: Sequence[PartitionRange], bound: str) -> dict[str, dict[str, int]]:
    offsets: dict[str, dict[str, int]] = {}
    for part in ranges:
        offsets.setdefault(part.topic, {})[str(part.partition)] = getattr(part, bound)
    return offsets


def remove_unfinished_lands(landing_dir: Path) -> None:
    """The hidden folders of lands killed before they completed (this process holds the warehouse)."""
    shutil.rmtree(landing_dir / STAGING_FOLDER, ignore_errors=True)


def quoted(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def offsets_table(spark: "SparkSession", settings: Settings) -> str:
    """The offsets table (created on first use), in the build's table format."""
    table = f"{quoted(settings.schema)}.{quoted(OFFSETS_TABLE)}"
    spark.sql(f"create schema if not exists {quoted(settings.schema)}")
    spark.sql(
        f"create table if not exists {table} ("
        " landing_dir string comment 'The landing folder the records were written into',"
        " topic string, `partition` int,"
        " next_offset bigint comment 'The first offset not landed yet',"
        " records bigint comment 'Records this land wrote of the partition',"
        " offsets_lost bigint comment 'Offsets retention deleted before they were landed',"
        " landed_folder string comment 'The folder this land wrote',"
        " landed_ts timestamp)"
        f" using {settings.table_format}"
        " comment 'What cdc-dbt land has landed: one row per land and partition read'"
    )
    return table


def recorded_next_offsets(spark: "SparkSession", table: str, landing_dir: Path) -> dict[tuple[str, int], int]:
    rows = spark.sql(
        f"select topic, `partition`, max(next_offset) as next_offset from {table}"
        f" where landing_dir = {string_literal(str(landing_dir))} group by topic, `partition`"
    ).collect()
    return {(row.topic, row.partition): row.next_offset for row in rows}


def string_literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def record_offsets(
    spark: "SparkSession",
    table: str,
    landing_dir: Path,
    ranges: Sequence[PartitionRange],
    landed: Sequence[LandedPartition],
    folder: Path | None,
) -> None:
    """Append, per partition read (or found emptied by retention), the next offset to read."""
    if not ranges:
        return
    records = {(part.topic, part.partition): part.records for part in landed}
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    rows: list[tuple[Any, ...]] = [
        (
            str(landing_dir), part.topic, part.partition, part.end, records.get((part.topic, part.partition), 0),
            part.lost, None if folder is None else str(folder), now,
        )
        for part in ranges
    ]  # fmt: skip
    spark.createDataFrame(rows, spark.table(table).schema).write.insertInto(table)
