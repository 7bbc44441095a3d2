"""Reading the landing folder as the build reads it, without Spark: which files (kcat JSON lines,
gzip or not, and Spark-Kafka Parquet), and their records, each parsed by the parsing core's landing
reader (`udfs.landing`)."""

import gzip
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from udfs.landing import LandedRecord, decode_kafka_bytes, parse_kcat_line
from udfs.reasons import Reason

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
            key, key_problem = decode_kafka_bytes(row.get("key"), "key")
            payload, payload_problem = decode_kafka_bytes(row.get("value"), "value")
            timestamp = row.get("timestamp")
            problem = key_problem or payload_problem
            yield LandedRecord(
                topic=row.get("topic"),
                partition=row.get("partition"),
                offset=row.get("offset"),
                kafka_ts_ms=int(timestamp.timestamp() * 1000) if isinstance(timestamp, datetime) else None,
                key=key,
                payload=payload,
                reason=Reason.INVALID_ENCODING.value if problem else None,
                detail=problem,
            )
