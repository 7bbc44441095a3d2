"""Debezium's PostgreSQL connector: what a Debezium 2.5 connector named `dbserver1` publishes.

JsonConverter with schemas, `provide.transaction.metadata=true`, tombstones on delete. The
Connect schemas of keys, envelopes and transaction metadata, and `Connector`, which turns the
scenario's changes into records: LSNs, txIds, `source.sequence`, envelopes, tombstones, and the
BEGIN/END records on `dbserver1.transaction`.
"""

from typing import Any

from generator.inventory import (
    DATABASE,
    DEBEZIUM_VERSION,
    PG_SCHEMA,
    SERVER_NAME,
    TABLES,
    TRANSACTION_TOPIC,
    Table,
)
from generator.kafka import Frame, Message, Sink, compact, dumps
from generator.scenario import SNAPSHOT_ROWS_PER_MS, Change, Dice, Transaction

# --------------------------------------------------------------------------------------------
# Schemas (exactly as JsonConverter renders Debezium's Connect schemas)
# --------------------------------------------------------------------------------------------


def _source_schema() -> dict[str, Any]:
    def plain(kind: str, name: str, optional: bool) -> dict[str, Any]:
        return {"type": kind, "optional": optional, "field": name}

    snapshot = {
        "type": "string",
        "optional": True,
        "name": "io.debezium.data.Enum",
        "version": 1,
        "parameters": {"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},
        "default": "false",
        "field": "snapshot",
    }
    fields = [
        plain("string", "version", False),
        plain("string", "connector", False),
        plain("string", "name", False),
        plain("int64", "ts_ms", False),
        snapshot,
        plain("string", "db", False),
        plain("string", "sequence", True),
        plain("string", "schema", False),
        plain("string", "table", False),
        plain("int64", "txId", True),
        plain("int64", "lsn", True),
        plain("int64", "xmin", True),
    ]
    return {
        "type": "struct",
        "fields": fields,
        "optional": False,
        "name": "io.debezium.connector.postgresql.Source",
        "field": "source",
    }


def _transaction_block_schema() -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "id"},
            {"type": "int64", "optional": False, "field": "total_order"},
            {"type": "int64", "optional": False, "field": "data_collection_order"},
        ],
        "optional": True,
        "name": "event.block",
        "version": 1,
        "field": "transaction",
    }


def envelope_schema(table: Table) -> dict[str, Any]:
    """The value schema Debezium registers for a table's change events."""
    prefix = f"{SERVER_NAME}.{table.qualified}"

    def row(field_name: str) -> dict[str, Any]:
        return {
            "type": "struct",
            "fields": [column.field_schema() for column in table.columns],
            "optional": True,
            "name": f"{prefix}.Value",
            "field": field_name,
        }

    return {
        "type": "struct",
        "fields": [
            row("before"),
            row("after"),
            _source_schema(),
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
            _transaction_block_schema(),
        ],
        "optional": False,
        "name": f"{prefix}.Envelope",
        "version": 1,
    }


def key_schema(table: Table) -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [table.columns[0].field_schema()],
        "optional": False,
        "name": f"{SERVER_NAME}.{table.qualified}.Key",
    }


def _transaction_value_schema() -> dict[str, Any]:
    collection = {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "data_collection"},
            {"type": "int64", "optional": False, "field": "event_count"},
        ],
        "optional": False,
    }
    return {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "status"},
            {"type": "string", "optional": False, "field": "id"},
            {"type": "int64", "optional": True, "field": "event_count"},
            {"type": "array", "items": collection, "optional": True, "field": "data_collections"},
            {"type": "int64", "optional": False, "field": "ts_ms"},
        ],
        "optional": False,
        "name": "io.debezium.connector.common.TransactionMetadataValue",
        "version": 1,
    }


def _transaction_key_schema() -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [{"type": "string", "optional": False, "field": "id"}],
        "optional": False,
        "name": "io.debezium.connector.common.TransactionMetadataKey",
        "version": 1,
    }


# --------------------------------------------------------------------------------------------
# The connector: positions, envelopes, transaction metadata
# --------------------------------------------------------------------------------------------


class Connector:
    """Turns changes into Debezium records: LSNs, txIds, sequence, envelopes, tombstones."""

    def __init__(self, rng: Dice, sink: Sink, stream_events: int) -> None:
        self.rng = rng
        self.sink = sink
        # Start just below a power of ten so that LSNs and txIds change digit count mid-stream:
        # consumers comparing positions as strings get caught.
        self.lsn = max(24_000_000, 100_000_000 - stream_events * 150)
        self.last_commit_lsn = self.lsn
        self.tx_id = max(500, 1000 - stream_events // 6)
        self._frames = {t.name: (Frame(key_schema(t)), Frame(envelope_schema(t))) for t in TABLES}
        self._tx_key_frame = Frame(_transaction_key_schema())
        self._tx_value_frame = Frame(_transaction_value_schema())
        self.ops = dict.fromkeys(("r", "c", "u", "d", "t"), 0)
        self.tombstones = 0
        self.transactions = 0
        self.transaction_records = 0

    def _emit_change(
        self,
        change: Change,
        source_ts: int,
        snapshot: str,
        sequence: str,
        envelope_ts: int,
        kafka_ts: int,
        block: dict[str, Any] | None,
    ) -> None:
        table = change.table
        key_frame, value_frame = self._frames[table.name]
        payload = {
            "before": change.before,
            "after": change.after,
            "source": {
                "version": DEBEZIUM_VERSION,
                "connector": "postgresql",
                "name": SERVER_NAME,
                "ts_ms": source_ts,
                "snapshot": snapshot,
                "db": DATABASE,
                "sequence": sequence,
                "schema": PG_SCHEMA,
                "table": table.name,
                "txId": self.tx_id,
                "lsn": self.lsn,
                "xmin": None,
            },
            "op": change.op,
            "ts_ms": envelope_ts,
            "transaction": block,
        }
        key = None if change.row_id is None else Message(key_frame, b'{"id":%d}' % change.row_id)
        value = Message(value_frame, dumps(payload))
        self.sink.emit(table.topic, key, value, kafka_ts, change.headers)
        self.ops[change.op] += 1
        if change.op == "d":
            # Tombstone right after the delete, same key (so same partition), same headers.
            self.sink.emit(table.topic, key, None, kafka_ts, change.headers)
            self.tombstones += 1

    def snapshot(self, changes: list[Change], start_ts_ms: int) -> None:
        """All snapshot reads share the snapshot's LSN and txId and carry no transaction."""
        between = self.rng.between
        self.tx_id += 1
        sequence = compact([None, str(self.lsn)])
        last = len(changes) - 1
        for index, change in enumerate(changes):
            marker = "first" if index == 0 else "last" if index == last else "true"
            source_ts = start_ts_ms + index // SNAPSHOT_ROWS_PER_MS
            envelope_ts = source_ts + between(1, 9)
            kafka_ts = envelope_ts + between(1, 6)
            self._emit_change(change, source_ts, marker, sequence, envelope_ts, kafka_ts, None)

    def transaction(self, transaction: Transaction) -> None:
        """BEGIN, the events at strictly increasing LSNs, END; source.ts_ms is the commit time."""
        # `lo + int(rnd() * n)` is `rng.between(lo, lo + n - 1)` inlined: this loop runs for
        # every event, and the call would be a tenth of its cost.
        rnd = self.rng.random
        self.tx_id += 1 + int(rnd() * 3)  # other databases use txIds in between
        self.lsn += 40 + int(rnd() * 361)
        tx_name = f"{self.tx_id}:{self.lsn}"
        tx_key = Message(self._tx_key_frame, b'{"id":"%s"}' % tx_name.encode())
        commit_ts = transaction.commit_ts_ms
        envelope_ts = commit_ts + 2 + int(rnd() * 29)
        begin = b'{"status":"BEGIN","id":"%s","event_count":null,"data_collections":null,"ts_ms":%d}'
        self._transaction_record(tx_key, begin % (tx_name.encode(), commit_ts), envelope_ts)
        per_collection: dict[str, int] = {}
        for total_order, change in enumerate(transaction.changes, start=1):
            if total_order > 1:
                self.lsn += 40 + int(rnd() * 361)
            collection = change.table.qualified
            order_in_collection = per_collection.get(collection, 0) + 1
            per_collection[collection] = order_in_collection
            block = {
                "id": tx_name,
                "total_order": total_order,
                "data_collection_order": order_in_collection,
            }
            sequence = f'["{self.last_commit_lsn}","{self.lsn}"]'
            envelope_ts += int(rnd() * 4)
            kafka_ts = envelope_ts + 1 + int(rnd() * 6)
            self._emit_change(change, commit_ts, "false", sequence, envelope_ts, kafka_ts, block)
        self.last_commit_lsn = self.lsn + 24 + int(rnd() * 97)
        self.lsn = self.last_commit_lsn
        end = {
            "status": "END",
            "id": tx_name,
            "event_count": len(transaction.changes),
            "data_collections": [
                {"data_collection": name, "event_count": count} for name, count in per_collection.items()
            ],
            "ts_ms": commit_ts,
        }
        self._transaction_record(tx_key, dumps(end), envelope_ts + 1)
        self.transactions += 1

    def _transaction_record(self, key: Message, payload: bytes, kafka_ts: int) -> None:
        # BEGIN and END share the key, hence the partition: they stay in order.
        self.sink.emit(TRANSACTION_TOPIC, key, Message(self._tx_value_frame, payload), kafka_ts)
        self.transaction_records += 1
