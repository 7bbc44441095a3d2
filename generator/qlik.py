"""A Qlik Replicate task replicating `HR.EMPLOYEES` to Kafka (enveloped JSON, metadata on its own topic).

The full load as REFRESH records, then CDC with the masks an Oracle source without full
supplemental logging gives (an update captures the key and what it changed, and may leave other
columns out: their value in `data` is not theirs), deletes, and a second table version that adds
`DEPARTMENT`. Small, written as kcat JSON lines; `simulate_qlik` returns the table's final state.
"""

import hashlib
import json
import random
from datetime import UTC, datetime
from typing import Any

from generator.kafka import KcatWriter
from generator.oracle import Row, canonical
from generator.scenario import STREAM_START_MS

QLIK_METADATA_TOPIC = "qlik.metadata"
QLIK_DATA_TOPIC = "qlik.HR.EMPLOYEES"
QLIK_TABLE = "HR.EMPLOYEES"

_DEPARTMENTS = ("Sales", "Finance", "Research", "Support")
_NAMES = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Niklaus")

QlikColumn = tuple[str, str, int, int, int, int]
"""Name, Qlik type, length, precision, scale, primaryKeyPosition."""

QLIK_COLUMNS_V1: tuple[QlikColumn, ...] = (
    ("EMPLOYEE_ID", "INT4", 0, 10, 0, 1),
    ("FIRST_NAME", "STRING", 40, 0, 0, 0),
    ("LAST_NAME", "STRING", 40, 0, 0, 0),
    ("SALARY", "NUMERIC", 0, 10, 2, 0),
    ("HIRE_DATE", "DATE", 0, 0, 0, 0),
)
QLIK_COLUMNS_V2 = (*QLIK_COLUMNS_V1, ("DEPARTMENT", "STRING", 30, 0, 0, 0))


class QlikTask:
    """Emits what Replicate writes for one table; `rows` is the table's true state."""

    def __init__(self, rng: random.Random, writer: KcatWriter) -> None:
        self.rng = rng
        self.writer = writer
        self.rows: dict[int, Row] = {}
        self.columns = QLIK_COLUMNS_V1
        self.schema_id = ""
        self.table_version = 0
        self.sequence = 0
        self.ts_ms = STREAM_START_MS
        self.transaction = 0

    def publish_metadata(self, columns: tuple[QlikColumn, ...]) -> None:
        self.columns = columns
        self.table_version += 1
        self.schema_id = hashlib.md5(f"{QLIK_TABLE}:{self.table_version}".encode()).hexdigest().upper()
        message = {
            "schemaId": self.schema_id,
            "lineage": {
                "server": "replicate-01",
                "task": "oracle-to-kafka",
                "schema": "HR",
                "table": "EMPLOYEES",
                "tableVersion": self.table_version,
                "timestamp": _qlik_time(self.ts_ms),
            },
            "tableStructure": {
                "tableColumns": {
                    name: {
                        "ordinal": ordinal,
                        "type": kind,
                        "length": length,
                        "precision": precision,
                        "scale": scale,
                        "primaryKeyPosition": key_position,
                        "nullable": key_position == 0,
                    }
                    for ordinal, (name, kind, length, precision, scale, key_position) in enumerate(columns, 1)
                }
            },
            "dataSchema": "",
        }
        envelope = self._envelope("MD", message)
        self.writer.emit(QLIK_METADATA_TOPIC, canonical({"schemaId": self.schema_id}), envelope, self.ts_ms)

    def new_row(self, employee_id: int) -> Row:
        row = {
            "EMPLOYEE_ID": employee_id,
            "FIRST_NAME": self.rng.choice(_NAMES),
            "LAST_NAME": self.rng.choice(_NAMES) + "son",
            "SALARY": f"{self.rng.randint(3000, 9000)}.{self.rng.randint(0, 99):02d}",
            "HIRE_DATE": f"20{self.rng.randint(10, 23)}-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}",
        }
        if len(self.columns) > len(QLIK_COLUMNS_V1):
            row["DEPARTMENT"] = self.rng.choice(_DEPARTMENTS)
        return row

    def refresh(self, row: Row) -> None:
        """A full-load record: no position, no timestamp, null masks."""
        self.rows[row["EMPLOYEE_ID"]] = row
        headers = self._headers("REFRESH", None, None, cdc=False)
        self._emit(row, {"data": row, "beforeData": None, "headers": headers})

    def insert(self, row: Row) -> None:
        self.rows[row["EMPLOYEE_ID"]] = row
        every_column = _mask(range(1, len(self.columns) + 1))
        self._emit(
            row, {"data": row, "beforeData": None, "headers": self._headers("INSERT", every_column, every_column)}
        )

    def update(self, employee_id: int) -> None:
        """Change one or two non-key columns; capture the key, them, and maybe some others."""
        before = self.rows[employee_id]
        after = dict(before)
        names = [name for name, *_ in self.columns[1:]]
        changed = self.rng.sample(names, self.rng.randint(1, 2))
        fresh = self.new_row(employee_id)
        for name in changed:
            after[name] = fresh.get(name, self.rng.choice(_DEPARTMENTS))
        captured = {"EMPLOYEE_ID", *changed, *(name for name in names if self.rng.random() < 0.4)}
        ordinals = {name: ordinal for ordinal, (name, *_) in enumerate(self.columns, 1)}
        # A column not captured is sent as null: the value means "unknown", never NULL.
        data = {name: (after.get(name) if name in captured else None) for name in ordinals}
        before_data = {name: (before.get(name) if name in captured else None) for name in ordinals}
        headers = self._headers(
            "UPDATE", _mask(ordinals[name] for name in changed), _mask(ordinals[name] for name in captured)
        )
        self.rows[employee_id] = after
        self._emit(after, {"data": data, "beforeData": before_data, "headers": headers})

    def delete(self, employee_id: int) -> None:
        row = self.rows.pop(employee_id)
        headers = self._headers("DELETE", _mask([1]), _mask(range(1, len(self.columns) + 1)))
        self._emit(row, {"data": row, "beforeData": None, "headers": headers})

    def commit(self) -> None:
        self.transaction += 1

    def _headers(self, operation: str, change_mask: str | None, column_mask: str | None, cdc: bool = True) -> Row:
        self.ts_ms += self.rng.randint(50, 900)
        if not cdc:
            return {
                "operation": operation,
                "changeSequence": "",
                "timestamp": "",
                "streamPosition": "",
                "transactionId": "",
                "changeMask": None,
                "columnMask": None,
                "externalSchemaId": None,
            }
        self.sequence += 1
        return {
            "operation": operation,
            "changeSequence": f"{self.ts_ms:020d}{self.sequence:015d}",
            "timestamp": _qlik_time(self.ts_ms),
            "streamPosition": f"00000000.{self.sequence:08x}",
            "transactionId": f"{self.transaction:032X}",
            "changeMask": change_mask,
            "columnMask": column_mask,
            "externalSchemaId": None,
            "transactionEventCounter": 1,
            "transactionLastEvent": True,
        }

    def _emit(self, row: Row, message: Row) -> None:
        key = canonical({"EMPLOYEE_ID": row["EMPLOYEE_ID"]})
        self.writer.emit(QLIK_DATA_TOPIC, key, self._envelope("DT", message), self.ts_ms + 3)

    def _envelope(self, kind: str, message: Row) -> str:
        envelope = {
            "magic": "atMSG",
            "type": kind,
            "headers": None,
            "messageSchemaId": self.schema_id,
            "messageSchema": None,
            "message": message,
        }
        return json.dumps(envelope, separators=(",", ":"))


def _mask(ordinals: Any) -> str:
    """Hex of the bits of `ordinals` (ordinal k is bit k-1), in whole bytes as Qlik writes it."""
    bits = sum(1 << (ordinal - 1) for ordinal in set(ordinals))
    width = max(2, -(-bits.bit_length() // 8) * 2)
    return f"{bits:0{width}X}"


def _qlik_time(ts_ms: int) -> str:
    """`headers.timestamp` as Replicate writes it: UTC, milliseconds, no zone."""
    seconds, millis = divmod(ts_ms, 1000)
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}"


def simulate_qlik(rng: random.Random, writer: KcatWriter, employees: int, changes: int) -> dict[str, Row]:
    task = QlikTask(rng, writer)
    task.publish_metadata(QLIK_COLUMNS_V1)
    for employee_id in range(100, 100 + employees):
        task.refresh(task.new_row(employee_id))
    next_id = 100 + employees
    for step in range(changes):
        if step == changes // 2:
            # ALTER TABLE ADD DEPARTMENT: existing rows hold NULL; Replicate publishes version 2.
            task.publish_metadata(QLIK_COLUMNS_V2)
            for row in task.rows.values():
                row["DEPARTMENT"] = None
        draw = rng.random()
        if draw < 0.25 or len(task.rows) < 3:
            task.insert(task.new_row(next_id))
            next_id += 1
        elif draw < 0.85:
            task.update(rng.choice(sorted(task.rows)))
        else:
            task.delete(rng.choice(sorted(task.rows)))
        task.commit()
    return {canonical({"EMPLOYEE_ID": employee_id}): row for employee_id, row in task.rows.items()}
