"""Write Kafka records as `kcat -C -J` lines, the landing format tests build their inputs in."""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class KafkaRecord:
    topic: str
    partition: int
    offset: int
    key: str | None
    payload: str | None
    ts_ms: int = 1_700_000_000_000


def kcat_json(record: KafkaRecord) -> str:
    return json.dumps(
        {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "tstype": "create",
            "ts": record.ts_ms,
            "broker": 0,
            "key": record.key,
            "payload": record.payload,
        }
    )


def write_kcat_file(path: Path, records: Iterable[KafkaRecord]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(kcat_json(record) + "\n" for record in records))
    return path
