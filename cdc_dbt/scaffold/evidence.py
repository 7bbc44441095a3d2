"""What the landed records say about one source table's columns: its row key's fields, the
Debezium converter's row schemas, the Qlik table versions, and the JSON types of the values seen.

Every record is parsed by the parsing core as the build parses it (`udfs.records.parse_record`);
what a change says beyond its row JSON (the converter's field schemas, MongoDB's Extended JSON) is
read by the core too (`udfs.column_evidence`). A Qlik data message held for its metadata message is
bound by the build's rule (`udfs.qlik_binding`, the twin of int_qlik_records_bound).
"""

import sys
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdc_dbt.column_types import Seen, debezium_type, merge_seen, seen_value
from cdc_dbt.scaffold.landed_files import landed_files, read_landed_file
from udfs import json_text, mongodb, qlik
from udfs.column_evidence import mongodb_documents, row_field_schemas
from udfs.converter import load_message
from udfs.events import ParsedRecord
from udfs.landing import LandedRecord
from udfs.logical_types import is_unavailable
from udfs.qlik_binding import MetadataMessage, QlikBinder
from udfs.reasons import IgnoreClass, Outcome, Reason
from udfs.records import parse_record

TableId = tuple[str, str | None]
"""(source_table, connector): a table's name alone does not say what it is."""


@dataclass
class TableEvidence:
    """Everything the landed records of one source table (from one connector) say about its
    columns, newest information first where versions differ."""

    source_table: str
    connector: str | None
    key_fields: dict[str, None] = field(default_factory=dict)
    row_schemas: dict[str, tuple[Mapping[str, Mapping[str, Any]], int]] = field(default_factory=dict)
    """Debezium row schemas (field schemas by name) by their canonical text, with the newest time
    a record of each was seen."""
    qlik_schemas: dict[str, tuple[qlik.QlikTableSchema, int]] = field(default_factory=dict)
    """Qlik table versions by schemaId, with their landing order."""
    seen: dict[str, Seen] = field(default_factory=dict)
    """The JSON types of each field's values, fields in the order first seen."""


@dataclass
class _HeldQlikRecord:
    topic: str | None
    partition: int
    offset: int
    payload: str
    schema_id: str | None
    ts_ms: int


class LandingReader:
    """Reads landed records one by one and keeps the tables they name, with the evidence of the
    tables whose name matches `wanted` (case-insensitively: the exact one is chosen later), one
    name or several."""

    def __init__(self, wanted: str | Collection[str]) -> None:
        self.wanted = {name.lower() for name in ([wanted] if isinstance(wanted, str) else wanted)}
        self.tables: dict[TableId, int] = {}
        self.evidence: dict[TableId, TableEvidence] = {}
        self._order = 0
        self._qlik_binder = QlikBinder()
        self._held: list[_HeldQlikRecord] = []
        self._row_schemas: dict[int, tuple[Mapping[str, Any], Mapping[str, Any] | None, str, bool]] = {}

    def read(self, records: Iterable[LandedRecord]) -> None:
        for record in records:
            self._order += 1
            if record.reason is None:
                self._add(record)

    def finish(self) -> None:
        """Bind the Qlik data messages held for their metadata, as int_qlik_records_bound does."""
        for held in self._held:
            metadata = self._qlik_binder.metadata_for(
                held.topic, held.partition, held.offset, held.schema_id, held.payload
            )
            if metadata is None:
                continue
            parsed = qlik.parse_qlik_record(held.payload, metadata, held.partition, held.offset)
            if parsed.outcome == Outcome.CHANGE.value:
                self._add_change(parsed, None, held.ts_ms)
        self._held.clear()

    def _add(self, record: LandedRecord) -> None:
        partition, offset = record.partition or 0, record.offset or 0
        parsed = parse_record(record.key, record.payload, partition, offset, record.topic)
        ts_ms = record.kafka_ts_ms or 0
        if parsed.outcome == Outcome.CHANGE.value:
            self._add_change(parsed, record.payload, ts_ms)
        elif parsed.ignore_class == IgnoreClass.METADATA_MESSAGE.value and record.payload is not None:
            self._add_qlik_metadata(record.topic, partition, offset, record.payload)
        elif parsed.reason == Reason.UNKNOWN_QLIK_SCHEMA.value and record.payload is not None:
            self._held.append(
                _HeldQlikRecord(record.topic, partition, offset, record.payload, parsed.qlik_schema_id, ts_ms)
            )

    def _add_qlik_metadata(self, topic: str | None, partition: int, offset: int, payload: str) -> None:
        body, _ = load_message(payload)
        schema = qlik.parse_metadata(body)  # parse_record has parsed it already: it does not raise
        self._qlik_binder.add_metadata(MetadataMessage(topic, partition, offset, schema.schema_id, payload))
        table_id = (schema.source_table, qlik.CONNECTOR)
        self.tables.setdefault(table_id, 0)
        evidence = self._evidence(table_id)
        if evidence is not None:
            evidence.qlik_schemas.setdefault(schema.schema_id, (schema, self._order))

    def _evidence(self, table_id: TableId) -> TableEvidence | None:
        if table_id[0].lower() not in self.wanted:
            return None
        return self.evidence.setdefault(table_id, TableEvidence(*table_id))

    def _add_change(self, parsed: ParsedRecord, payload: str | None, kafka_ts_ms: int) -> None:
        if parsed.source_table is None:
            return
        table_id = (parsed.source_table, parsed.connector)
        self.tables[table_id] = self.tables.get(table_id, 0) + 1
        evidence = self._evidence(table_id)
        if evidence is None:
            return
        if parsed.row_key is not None:
            row_key = json_text.loads(parsed.row_key)
            evidence.key_fields.update(dict.fromkeys(row_key if isinstance(row_key, Mapping) else ()))
        newest = parsed.source_ts_ms or kafka_ts_ms
        body, schema = load_message(payload) if payload is not None else (None, None)
        body = body if isinstance(body, Mapping) else None
        if parsed.connector == mongodb.CONNECTOR and body is not None:
            for document in mongodb_documents(body):
                _observe(evidence, document, extended=True)
            return
        if body is not None and schema is not None and self._add_row_schema(evidence, body, schema, newest):
            return
        unavailable = set(parsed.unavailable_columns)
        for image in (parsed.after, parsed.before):
            row = json_text.loads(image) if image is not None else None
            if isinstance(row, Mapping):
                _observe(evidence, {n: v for n, v in row.items() if n not in unavailable}, extended=False)

    def _add_row_schema(
        self, evidence: TableEvidence, body: Mapping[str, Any], schema: Mapping[str, Any], newest: int
    ) -> bool:
        """Keep the row schema of a record; True when it types every field (the values then say
        nothing more). The converter's schema objects are shared per distinct text
        (`udfs.converter`): each is read once, and told apart from the others by its content."""
        known = self._row_schemas.get(id(schema))
        if known is None or known[0] is not schema:
            if len(self._row_schemas) >= _MAX_SCHEMAS_KEPT:
                self._row_schemas.clear()
            row_schema = row_field_schemas(body, schema)
            content = json_text.canonical(row_schema) if row_schema else ""
            complete = bool(row_schema) and all(debezium_type(s) is not None for s in (row_schema or {}).values())
            known = (schema, row_schema, content, complete)
            self._row_schemas[id(schema)] = known
        _, row_schema, content, complete = known
        if not row_schema:
            return False
        _, seen_ts = evidence.row_schemas.get(content, (row_schema, newest))
        evidence.row_schemas[content] = (row_schema, max(seen_ts, newest))
        return complete


_MAX_SCHEMAS_KEPT = 1024
"""Schema objects are kept (so that no other object takes their id) up to this many at a time."""


def _observe(evidence: TableEvidence, row: Mapping[str, Any], *, extended: bool) -> None:
    for name, value in row.items():
        if is_unavailable(value):
            continue
        seen = seen_value(value, extended=extended)
        evidence.seen[name] = merge_seen(evidence.seen[name], seen) if name in evidence.seen else seen


def read_landing(landing_dir: Path, wanted: str | Collection[str]) -> LandingReader:
    """Every landed file's records, read; a file that cannot be read is skipped, and said."""
    reader = LandingReader(wanted)
    for path in landed_files(landing_dir):
        try:
            reader.read(read_landed_file(path))
        except (OSError, EOFError, ValueError) as error:  # a cut gzip stream, a damaged Parquet footer
            print(f"cdc-dbt scaffold: skipped {path}: {error}", file=sys.stderr)
    reader.finish()
    return reader
