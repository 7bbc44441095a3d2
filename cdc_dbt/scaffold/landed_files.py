"""Reading the landing folder as the build reads it, without Spark: which files (kcat JSON lines,
gzip or not, and Spark-Kafka Parquet), and their records, each parsed by the parsing core's landing
reader (`udfs.landing`). A Parquet key or value in a Schema Registry's wire format (Avro) is read as
the build reads it, as its JsonConverter text, its schema from the registry CDC_SCHEMA_REGISTRY_URL
names (`udfs.avro`)."""

import gzip
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from udfs.avro import is_wire_format, message_texts
from udfs.landing import LandedRecord, decode_kafka_bytes, parse_kcat_line
from udfs.reasons import Reason, RecordError
from udfs.schema_registry import registry_from_environment

KCAT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt", ".json.gz", ".jsonl.gz", ".ndjson.gz")
"""The build's `kcat_file_glob` (macros/landing/create_landing_tables.sql)."""
PARQUET_SUFFIX = ".parquet"


def landed_files(landing_dir: Path) -> list[Path]:
    """The files a build reads, in a stable order: kcat lines and Parquet, recursively. Names
    Spark's file listing skips (`_SUCCESS`, `.crc`, a hidden folder) are skipped here too."""
    files = []
    for path in sorted(landing_dir.rglob("*")):
        parts = path.relative_to(landing_dir).parts
        if any(part.startswith(".") or (part.startswith("_") and "=" not in part) for part in parts):
            continue
        if path.is_file() and path.name.endswith((*KCAT_SUFFIXES, PARQUET_SUFFIX)):
            files.append(path)
    return files


def read_landed_file(path: Path) -> Iterator[LandedRecord]:
    """The records of one landed file; a line that is no record comes back with its reason."""
    if path.name.endswith(PARQUET_SUFFIX):
        yield from _parquet_records(path)
        return
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as lines:
            yield from (parse_kcat_line(line) for line in lines if line.strip())
    else:
        with path.open(encoding="utf-8", errors="replace") as lines:
            yield from (parse_kcat_line(line) for line in lines if line.strip())


def _parquet_records(path: Path) -> Iterator[LandedRecord]:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    wanted = [
        name
        for name in ("key", "value", "topic", "partition", "offset", "timestamp")
        if name in parquet.schema_arrow.names
    ]
    for batch in parquet.iter_batches(batch_size=4096, columns=wanted):
        for row in batch.to_pylist():
            key, payload, reason, problem = _texts(row.get("key"), row.get("value"))
            timestamp = row.get("timestamp")
            yield LandedRecord(
                topic=row.get("topic"),
                partition=row.get("partition"),
                offset=row.get("offset"),
                kafka_ts_ms=int(timestamp.timestamp() * 1000) if isinstance(timestamp, datetime) else None,
                key=key,
                payload=payload,
                reason=reason,
                detail=problem,
            )


def _texts(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None, str | None, str | None]:
    """The key and payload texts of a Parquet record, and the reason and detail it cannot be read."""
    if any(data is not None and is_wire_format(data) for data in (key, value)):
        try:
            key_text, payload_text = message_texts(key, value, registry_from_environment())
        except RecordError as error:
            return None, None, error.reason.value, error.detail
        return key_text, payload_text, None, None
    key_text, key_problem = decode_kafka_bytes(key, "key")
    payload_text, payload_problem = decode_kafka_bytes(value, "value")
    problem = key_problem or payload_problem
    return key_text, payload_text, Reason.INVALID_ENCODING.value if problem else None, problem
