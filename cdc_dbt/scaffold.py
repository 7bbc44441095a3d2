"""`cdc-dbt scaffold <source_table>`: a typed mart for a landed source table, without Spark.

It reads the landed files itself (kcat JSON lines, gzip or not, and Spark-Kafka Parquet), parses
every record with the same parsing core the build registers as UDFs (`udfs`), and keeps what
the records of one source table say about its columns. Each column's Spark type comes from the
best information landed, in this order:

1. the Debezium JsonConverter schema of the row (`schema` beside `payload`);
2. the Qlik Replicate metadata message of the table (`tableStructure.tableColumns`);
3. the JSON types of the values seen in the rows (MongoDB's Extended JSON wrappers included,
   since they say more than the unwrapped value: `$numberLong`, `$date`, ...).

It writes `<t>_current.sql` and `<t>_history.sql`, one macro call each, and `_<t>__models.yml`,
the one declaration both read: the columns, their `data_type`, and per column the field of the
row JSON it reads (`meta.cdc_field`). The type mappings are in `cdc_dbt.column_types`.
"""

import argparse
import gzip
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from cdc_dbt.column_types import ColumnType, Seen, debezium_type, merge_seen, qlik_type, seen_type, seen_value
from cdc_dbt.settings import Settings
from udfs import debezium, flattened, json_text, mongodb, qlik
from udfs.converter import load_message
from udfs.events import ParsedRecord
from udfs.landing import LandedRecord, decode_kafka_bytes, parse_kcat_line
from udfs.logical_types import is_unavailable, struct_field_schemas
from udfs.reasons import IgnoreClass, Outcome, Reason, RecordError
from udfs.records import parse_record

KCAT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt", ".json.gz", ".jsonl.gz", ".ndjson.gz")
"""The build's `kcat_file_glob` (macros/landing/create_landing_tables.sql)."""
PARQUET_SUFFIX = ".parquet"

FIXED_CURRENT_COLUMNS = ("source_db", "row_key", "last_op", "last_changed_ts")
FIXED_HISTORY_COLUMNS = ("source_db", "row_key", "version", "valid_from", "valid_to", "is_current", "ended_by")
RESERVED_NAMES = frozenset(FIXED_CURRENT_COLUMNS + FIXED_HISTORY_COLUMNS)
"""The columns every typed mart has: a row column of the same name gets a suffix instead."""


class ScaffoldError(Exception):
    """A mistake of the user's or a state of the landing that stops the scaffold: one line, exit 2."""


# --- Names ----------------------------------------------------------------------------------


def safe_identifier(text: str, fallback: str = "column") -> str:
    """A lower-case identifier by the rule `cdc_schema_drift.column_identifier` uses (every
    character other than a letter, digit or underscore becomes `_`, and so does a leading digit)."""
    name = re.sub(r"[^a-z0-9_]", "_", text.lower())
    name = re.sub(r"^[0-9]", "_", name)
    return name or fallback


def column_names(fields: Iterable[str], reserved: Iterable[str] = RESERVED_NAMES) -> dict[str, str]:
    """Each field's column name: its safe identifier, unique. A name already taken (by a fixed
    column, or by an earlier field with the same identifier: `a.b` and `a_b`) gets `_2`, `_3`..."""
    taken = set(reserved)
    names: dict[str, str] = {}
    for source_field in fields:
        base = safe_identifier(source_field)
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}_{number}"
        taken.add(name)
        names[source_field] = name
    return names


def split_source_table(source_table: str) -> tuple[str | None, str]:
    """`inventory.customers` → (`inventory`, `customers`): schema (or db) and table. Split at the
    first dot: a MongoDB collection name may hold dots, a database name may not."""
    namespace, dot, table = source_table.partition(".")
    return (namespace, table) if dot and table else (None, source_table)


# --- Reading the landing folder -------------------------------------------------------------


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


# --- What the landed records say about one table --------------------------------------------

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
    tables whose name matches `wanted` (case-insensitively: the exact one is chosen later)."""

    def __init__(self, wanted: str) -> None:
        self.wanted = wanted.lower()
        self.tables: dict[TableId, int] = {}
        self.evidence: dict[TableId, TableEvidence] = {}
        self._order = 0
        self._metadata: dict[str, str] = {}
        self._metadata_ids_by_topic: dict[str | None, set[str]] = {}
        self._held: list[_HeldQlikRecord] = []
        self._row_schemas: dict[int, tuple[Mapping[str, Any], Mapping[str, Any] | None, str, bool]] = {}

    def read(self, records: Iterable[LandedRecord]) -> None:
        for record in records:
            self._order += 1
            if record.reason is None:
                self._add(record)

    def finish(self) -> None:
        """Bind the Qlik data messages held for their metadata, as int_qlik_records_bound does:
        by `messageSchemaId`, or (a bare message) to its topic's only schemaId."""
        for held in self._held:
            schema_id = held.schema_id
            if schema_id is None:
                topic_ids = self._metadata_ids_by_topic.get(held.topic, set())
                schema_id = next(iter(topic_ids)) if len(topic_ids) == 1 else None
            metadata = self._metadata.get(schema_id) if schema_id is not None else None
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
            self._add_qlik_metadata(record.topic, record.payload)
        elif parsed.reason == Reason.UNKNOWN_QLIK_SCHEMA.value and record.payload is not None:
            self._held.append(
                _HeldQlikRecord(record.topic, partition, offset, record.payload, parsed.qlik_schema_id, ts_ms)
            )

    def _add_qlik_metadata(self, topic: str | None, payload: str) -> None:
        body, _ = load_message(payload)
        schema = qlik.parse_metadata(body)  # parse_record has parsed it already: it does not raise
        self._metadata.setdefault(schema.schema_id, payload)
        self._metadata_ids_by_topic.setdefault(topic, set()).add(schema.schema_id)
        table_id = (schema.source_table, qlik.CONNECTOR)
        self.tables.setdefault(table_id, 0)
        evidence = self._evidence(table_id)
        if evidence is not None:
            evidence.qlik_schemas.setdefault(schema.schema_id, (schema, self._order))

    def _evidence(self, table_id: TableId) -> TableEvidence | None:
        if table_id[0].lower() != self.wanted:
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
            row_schema = debezium_row_schema(body, schema)
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


def debezium_row_schema(body: Mapping[str, Any], schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The field schemas of a row by the converter's schema: the envelope's `after` (or
    `before`) struct, or a flattened record's own fields less the transform's metadata."""
    if schema is None:
        return None
    fields = struct_field_schemas(schema)
    if debezium.is_envelope(body):
        for image in ("after", "before"):
            image_schema = fields.get(image)
            if image_schema is not None and image_schema.get("type") == "struct":
                row_fields = struct_field_schemas(image_schema)
                if row_fields:
                    return row_fields
        return None
    if flattened.is_flattened(body, schema):
        return {name: s for name, s in fields.items() if not flattened.is_metadata(name)} or None
    return None


def mongodb_documents(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A MongoDB event's documents as the connector wrote them, Extended JSON wrappers kept:
    `after` and `before`, and the top-level fields an update sets (1.x `patch` `$set`, 2.x
    `updateDescription.updatedFields`); a flattened record's own fields."""
    if not debezium.is_envelope(body):
        return [{name: value for name, value in body.items() if not flattened.is_metadata(name)}]
    documents = [_json_document(body.get("after")), _json_document(body.get("before"))]
    patch = _json_document(body.get("patch"))
    documents.append(_json_document(patch.get("$set")) if patch else None)
    description = body.get("updateDescription")
    if isinstance(description, Mapping):
        documents.append(_json_document(description.get("updatedFields")))
    return [
        {name: value for name, value in document.items() if "." not in name}
        for document in documents
        if document is not None
    ]


def _json_document(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json_text.loads(value)
        except RecordError:
            return None
    return value if isinstance(value, Mapping) else None


def read_landing(landing_dir: Path, wanted: str) -> LandingReader:
    reader = LandingReader(wanted)
    for path in landed_files(landing_dir):
        try:
            reader.read(read_landed_file(path))
        except (OSError, EOFError, ValueError) as error:  # a cut gzip stream, a damaged Parquet footer
            print(f"cdc-dbt scaffold: skipped {path}: {error}", file=sys.stderr)
    reader.finish()
    return reader


# --- The mart -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MartColumn:
    name: str
    source_field: str
    column_type: ColumnType
    is_key: bool


@dataclass(frozen=True)
class Mart:
    source_table: str
    connector: str | None
    model_stem: str
    columns: tuple[MartColumn, ...]

    @property
    def key_names(self) -> list[str]:
        return [column.name for column in self.columns if column.is_key]


def field_types(evidence: TableEvidence) -> dict[str, ColumnType]:
    """Each field's type from the best information landed, fields in the source's order: the
    newest Debezium schema's (or Qlik table version's) first, then older versions' fields, then
    fields only the rows show. A field takes its type from the newest schema that types it."""
    schemas = [row_schema for row_schema, _ in sorted(evidence.row_schemas.values(), key=lambda entry: -entry[1])]
    versions = [table for table, _ in sorted(evidence.qlik_schemas.values(), key=_newest_version_first)]
    ordered: dict[str, None] = {}
    for row_schema in schemas:
        ordered.update(dict.fromkeys(row_schema))
    for table_schema in versions:
        ordered.update(dict.fromkeys(column.name for column in table_schema.columns))
    ordered.update(dict.fromkeys(evidence.seen))
    ordered.update(dict.fromkeys(evidence.key_fields))

    def best_type(name: str) -> ColumnType:
        for row_schema in schemas:
            if name in row_schema and (column_type := debezium_type(row_schema[name])) is not None:
                return column_type
        for table_schema in versions:
            for column in table_schema.columns:
                if column.name == name and (column_type := qlik_type(column)) is not None:
                    return column_type
        return seen_type(evidence.seen.get(name, Seen()))

    return {name: best_type(name) for name in ordered}


def _newest_version_first(entry: tuple[qlik.QlikTableSchema, int]) -> tuple[int, int]:
    """Qlik table versions by `tableVersion`, then by landing order, newest first."""
    table_schema, landing_order = entry
    return -(table_schema.table_version or 0), -landing_order


def key_fields(evidence: TableEvidence) -> list[str]:
    """The row key's fields: the Debezium key (MongoDB's `_id`), or Qlik's primaryKeyPosition
    columns of the newest table version when no change has landed yet."""
    if evidence.key_fields:
        return list(evidence.key_fields)
    versions = sorted(evidence.qlik_schemas.values(), key=_newest_version_first)
    return list(versions[0][0].key_columns) if versions else []


def plan_mart(evidence: TableEvidence, model_stem: str) -> Mart:
    types = field_types(evidence)
    keys = set(key_fields(evidence))
    names = column_names(types)
    columns = tuple(MartColumn(names[name], name, types[name], name in keys) for name in types)
    return Mart(evidence.source_table, evidence.connector, model_stem, columns)


# --- The declaration ------------------------------------------------------------------------


def models_yaml(mart: Mart, command: str) -> str:
    """`_<t>__models.yml`: both models, their contract, grain and column tests, and per column
    the field of the row JSON it reads (`meta.cdc_field`)."""
    header = (
        f"# Typed marts of {one_line(_label(mart, jinja=False))}, written by\n"
        f"#   {one_line(command)}\n"
        "# from what had landed. Review each data_type (and name), then run `cdc-dbt build`.\n"
        "# cdc_dbt.cdc_typed_current() and cdc_dbt.cdc_typed_history() read this declaration; `meta.cdc_field` is\n"
        "# the field of the row JSON a column reads.\n"
    )
    document = {"version": 2, "models": [_current_model(mart), _history_model(mart)]}
    body: str = yaml.dump(document, Dumper=_IndentedDumper, sort_keys=False, allow_unicode=True, width=110)
    return header + body


class _IndentedDumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML has no type information
    """Block lists indented under their key, as the project's hand-written YAML has them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)


def _table_words(mart: Mart, *, jinja: bool = True) -> str:
    """The source table in a description: on one line, and, unless for a comment, safe from Jinja."""
    table = one_line(mart.source_table)
    return jinja_literal(table) if jinja else table


def _label(mart: Mart, *, jinja: bool = True) -> str:
    table = _table_words(mart, jinja=jinja)
    connector = one_line(mart.connector) if mart.connector else None
    return f"{table} ({jinja_literal(connector) if jinja else connector})" if connector else table


def jinja_literal(text: str) -> str:
    """Text from the data as dbt reads it back: dbt renders YAML values with Jinja (meta, and
    descriptions later), so a name holding `{{`, `{%` or `{#` goes in as a Jinja string literal
    that renders to exactly that name."""
    if not any(marker in text for marker in ("{{", "{%", "{#")):
        return text
    return "{{ " + json.dumps(text) + " }}"


def _model_config(mart: Mart) -> dict[str, Any]:
    return {
        "meta": {
            "cdc_source_table": jinja_literal(mart.source_table),
            "cdc_connector": jinja_literal(mart.connector) if mart.connector else None,
        },
        "contract": {"enforced": True},
    }


FIELDS_LANDED_TEST = {"cdc_dbt.typed_mart_fields_landed": {"config": {"severity": "warn"}}}
"""A declared field no landed row has (a typo after review) is said, not a column of nulls; a
warning, as a table may not have landed yet. On the _current mart: the fields are the same.
The project's generic tests are named with its package name: a user's own dbt project that
installs cdc-dbt as a package finds them only so (and this project too)."""


def _not_null() -> dict[str, Any]:
    """A column's rules: never null. A new dict each time: yaml.dump writes a shared one as an alias."""
    return {"not_null": True}


def _accepted_values(values: list[str]) -> dict[str, Any]:
    """A column's rules: null or one of `values`."""
    return {"accepted_values": values}


def _with_column_rules(model: dict[str, Any], grain: list[str]) -> dict[str, Any]:
    """The model with its columns' `rules` moved into one `cdc_dbt.column_rules` test, first in its
    data_tests, with its `grain`: one query checks every rule of the model and that no two rows share
    the grain's values. Columns in the order the model lists them."""
    rules = {column["name"]: column.pop("rules") for column in model["columns"] if "rules" in column}
    # Named: dbt would otherwise name the test after all its arguments, hundreds of characters.
    column_rules = {"name": f"column_rules_{model['name']}", "arguments": {"columns": rules, "grain": grain}}
    model["data_tests"] = [{"cdc_dbt.column_rules": column_rules}, *model["data_tests"]]
    return model


def _source_db_column(mart: Mart) -> dict[str, Any]:
    if mart.connector == qlik.CONNECTOR:
        description = "Null: Qlik names the schema and table, never the database."
    else:
        description = "The source database (Debezium `source.db`); with the key, a row's identity."
    return {"name": "source_db", "data_type": "string", "description": description}


def _row_key_column(model: str) -> dict[str, Any]:
    return {
        "name": "row_key",
        "data_type": "string",
        "description": f"Canonical key JSON of the row, as in {model}.",
        "rules": _not_null(),
    }


def _row_columns(mart: Mart) -> list[dict[str, Any]]:
    columns = []
    for column in mart.columns:
        key_words = "; part of the row key" if column.is_key else ""
        entry: dict[str, Any] = {
            "name": column.name,
            "data_type": jinja_literal(column.column_type.data_type),
            "description": (
                f"`{jinja_literal(one_line(column.source_field))}` of {_table_words(mart)}"
                f" ({column.column_type.origin}){key_words}."
            ),
            "meta": {"cdc_field": jinja_literal(column.source_field)},
        }
        if column.is_key:
            entry["rules"] = _not_null()
        columns.append(entry)
    return columns


def _current_model(mart: Mart) -> dict[str, Any]:
    model = {
        "name": f"{mart.model_stem}_current",
        "description": f"Typed current state of {_label(mart)}: one row per live row, from cdc_current.",
        "config": _model_config(mart),
        "data_tests": [FIELDS_LANDED_TEST],
        "columns": [
            _source_db_column(mart),
            _row_key_column("cdc_current"),
            *_row_columns(mart),
            {
                "name": "last_op",
                "data_type": "string",
                "description": "Op of the last event applied (c, r or u).",
                "rules": _accepted_values(["c", "r", "u"]),
            },
            {
                "name": "last_changed_ts",
                "data_type": "timestamp",
                "description": "When the source made that last change.",
            },
        ],
    }
    return _with_column_rules(model, ["source_db", *mart.key_names])


def _history_model(mart: Mart) -> dict[str, Any]:
    model = {
        "name": f"{mart.model_stem}_history",
        "description": (
            f"Typed history (SCD type 2) of {_label(mart)}: one row per version of a row, from cdc_history."
        ),
        "config": _model_config(mart),
        "data_tests": [],
        "columns": [
            _source_db_column(mart),
            _row_key_column("cdc_history"),
            {
                "name": "version",
                "data_type": "int",
                "description": "Version number per key, 1, 2, ... in source order.",
                "rules": _not_null(),
            },
            *_row_columns(mart),
            {
                "name": "valid_from",
                "data_type": "timestamp",
                "description": "When this version began: the source_ts of the event that made it.",
            },
            {
                "name": "valid_to",
                "data_type": "timestamp",
                "description": "When this version ended (null while current).",
            },
            {
                "name": "is_current",
                "data_type": "boolean",
                "description": "True for the open version of a live row.",
                "rules": _not_null(),
            },
            {
                "name": "ended_by",
                "data_type": "string",
                "description": "What ended the version: u (replaced), d (deleted), t (truncated); null while current.",
                "rules": _accepted_values(["u", "d", "t"]),
            },
        ],
    }
    return _with_column_rules(model, ["source_db", *mart.key_names, "version"])


CURRENT_SQL = "{{ cdc_dbt.cdc_typed_current() }}\n"
HISTORY_SQL = "{{ cdc_dbt.cdc_typed_history() }}\n"


def mart_files(mart: Mart, folder: Path, command: str) -> dict[Path, str]:
    """The three files of a mart, by path."""
    stem = mart.model_stem
    return {
        folder / f"{stem}_current.sql": CURRENT_SQL,
        folder / f"{stem}_history.sql": HISTORY_SQL,
        folder / f"_{stem}__models.yml": models_yaml(mart, command),
    }


# --- Choosing the table, and the command ----------------------------------------------------


def choose_table(tables: Mapping[TableId, int], wanted: str, connector: str | None, landing_dir: Path) -> TableId:
    """The landed table the user named: exactly, else its only case-insensitive match; with
    `connector` that connector's. Raises ScaffoldError saying what landed instead."""
    names = {name for name, _ in tables}
    if not names:
        raise ScaffoldError(f"no source table has landed in {landing_dir} (CDC_LANDING_DIR)")
    matches = [wanted] if wanted in names else [name for name in names if name.lower() == wanted.lower()]
    if len(matches) > 1:
        raise ScaffoldError(f"{wanted!r} matches {', '.join(sorted(matches))}: name one exactly as it landed")
    if not matches:
        landed = ", ".join(sorted(f"{name} ({c})" for name, c in tables))
        raise ScaffoldError(f"no source table {wanted!r} has landed in {landing_dir}; landed: {landed}")
    connectors = sorted((c for name, c in tables if name == matches[0]), key=str)
    if connector is not None:
        if connector not in connectors:
            raise ScaffoldError(
                f"{matches[0]} was not written by connector {connector!r}; it was by: {', '.join(map(str, connectors))}"
            )
        return matches[0], connector
    if len(connectors) > 1:
        raise ScaffoldError(
            f"{matches[0]} is written by more than one connector ({', '.join(map(str, connectors))}):"
            " name one with --connector"
        )
    return matches[0], connectors[0]


def model_name_clash(models_dir: Path, stem: str, written: Iterable[Path]) -> Path | None:
    """Another model file named `<stem>_current` or `<stem>_history`: dbt needs unique names."""
    targets = {path.resolve() for path in written}
    for suffix in ("_current", "_history"):
        for path in sorted(models_dir.rglob(f"{stem}{suffix}.sql")) if models_dir.is_dir() else ():
            if path.resolve() not in targets:
                return path
    return None


def write_files(files: Mapping[Path, str], force: bool) -> list[Path]:
    """Write all files, or none: an existing one stops everything unless `force`."""
    if not force:
        for path in files:
            if path.exists():
                raise ScaffoldError(f"{_shown(path)} exists: pass --force to overwrite it")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def one_line(text: str) -> str:
    """Text from the data (a table or field name may hold any character) on one printable line."""
    return "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)


def _shown(path: Path) -> str:
    """A path as the user typed theirs: relative to the current folder when under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _folder(value: str) -> str:
    if not re.fullmatch(r"[a-z0-9_]+(/[a-z0-9_]+)*", value):
        raise argparse.ArgumentTypeError(f"{value!r}: lower-case letters, digits and _, folders separated by /")
    return value


def _stem(value: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a lower-case identifier")
    return value


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdc-dbt scaffold",
        description=(
            "Write a typed mart for a landed source table: models/marts/<folder>/<table>_current.sql,"
            " <table>_history.sql and _<table>__models.yml, with Spark types from the Debezium schema,"
            " else the Qlik metadata, else the JSON values landed. Reads CDC_LANDING_DIR; starts no Spark."
        ),
    )
    parser.add_argument("source_table", help="as cdc_current.source_table names it, e.g. inventory.customers")
    parser.add_argument("--connector", help="the connector that wrote it (cdc_changes.connector), when several did")
    parser.add_argument("--folder", type=_folder, help="under models/marts/ (default: the schema or database)")
    parser.add_argument("--name", type=_stem, help="the models' name stem (default: the table, lower-cased)")
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    return parser


def main(argv: Sequence[str], settings: Settings) -> int:
    """`cdc-dbt scaffold ...`: 0 when written, 2 (one line on stderr) when nothing was."""
    args = argument_parser().parse_args(argv)
    try:
        written = scaffold(settings, args.source_table, args.connector, args.folder, args.name, args.force)
    except ScaffoldError as error:
        print(f"cdc-dbt scaffold: {one_line(str(error))}", file=sys.stderr)
        return 2
    for path in written:
        print(_shown(path))
    print(f"Review the types in {_shown(written[-1])}, then run `cdc-dbt build`.")
    return 0


def scaffold(
    settings: Settings,
    source_table: str,
    connector: str | None = None,
    folder: str | None = None,
    name: str | None = None,
    force: bool = False,
) -> list[Path]:
    """Read the landing, plan the mart, write its files; returns the paths written."""
    if not settings.landing_dir.is_dir():
        raise ScaffoldError(f"the landing folder {settings.landing_dir} does not exist (CDC_LANDING_DIR)")
    reader = read_landing(settings.landing_dir, source_table)
    table_id = choose_table(reader.tables, source_table, connector, settings.landing_dir)
    namespace, table = split_source_table(table_id[0])
    stem = name or safe_identifier(table, "table")
    models_dir = settings.project_dir / "models"
    target = models_dir / "marts" / (folder or safe_identifier(namespace or table, "marts"))
    command = " ".join(["cdc-dbt scaffold", _shell_word(table_id[0]), *_options(table_id[1], connector, folder, name)])
    files = mart_files(plan_mart(reader.evidence[table_id], stem), target, command)
    clash = model_name_clash(models_dir, stem, files)
    if clash is not None:
        raise ScaffoldError(
            f"a model named {clash.stem} exists already ({_shown(clash)}): choose another name with --name"
        )
    return write_files(files, force)


def _options(chosen: str | None, connector: str | None, folder: str | None, name: str | None) -> list[str]:
    options = [f"--connector {_shell_word(str(chosen))}"] if connector else []
    options += [f"--folder {folder}"] if folder else []
    return options + ([f"--name {name}"] if name else [])


def _shell_word(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_.\-/]+", text) else "'" + text.replace("'", "'\\''") + "'"
