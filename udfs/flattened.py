"""Debezium records flattened by the ExtractNewRecordState transform (ExtractNewDocumentState for
MongoDB): the row's columns at the top level instead of an envelope.

The transform's options decide what else a record holds: `add.fields` copies envelope and `source`
fields in with the prefix `__` (`__op`, `__table`, `__lsn`, `__source_ts_ms` for `source.ts_ms`,
...), `delete.handling.mode=rewrite` (`delete.tombstone.handling.mode=rewrite`) turns a delete into
its before image plus `__deleted: "true"` (every other record gets `"false"`).

Detection (no per-topic configuration): a JSON object that is no Debezium envelope (no `op` beside
`source`/`before`/`after`) and either has one of `SIGNAL_FIELDS` or comes with a converter schema
named `<topic>.Value` (the name Debezium gives a flattened value). A flattened record with neither
(the transform's defaults, schemas disabled) cannot be told from any other JSON object and is
quarantined as `not_an_envelope`.

Metadata: every top-level field named `__<name>` where `<name>` is a field of the Debezium envelope
or of a connector's `source` block (`METADATA_NAMES`), or starts with `source_` or `transaction_`
(`add.fields=source.x` and `transaction.x`), is metadata and is not part of the row; any other
field is a column (MongoDB's `__v`, say). The row's columns are decoded by the converter's schema
when it has one, and MongoDB Extended JSON is unwrapped for MongoDB records.

Op: `__deleted` true → `d` (the columns are the before image); else `__op` (`c`, `r`, `u`, `d`;
`t` a truncate; `m` an ignored logical decoding message); with neither the record is an upsert of
unknown kind and becomes `u` (it sets the row like `c` and `r` do, claiming no creation).

Table: `__db`, `__schema`, `__table` / `__collection` when present (named as `udfs.debezium`
names them); else the converter schema's name or the topic, Debezium's `<prefix>.<schema or
database>.<table>`: its last two segments. `source_db` only from `__db`.

Position: the connector's own (`udfs.positions`) from the metadata when it names the connector
(`__connector`, or `__collection` for MongoDB), else the one its position fields belong to:
PostgreSQL's from `__lsn`, SQL Server's from `__commit_lsn`, `__change_lsn` and
`__event_serial_no`, Db2's from `__commit_lsn` / `__change_lsn` alone, Oracle's from
`__commit_scn` / `__scn` (and `__rs_id`, `__ssn`), MySQL's from `__file`, `__pos` and `__row`
(and `__snapshot`); else Kafka's.
"""

from collections.abc import Mapping
from typing import Any

from udfs import debezium, extended_json, mongodb
from udfs.events import ParsedRecord, ignored
from udfs.keys import row_key_from_kafka_key
from udfs.logical_types import decode_struct, is_unavailable
from udfs.reasons import IgnoreClass, Reason, RecordError

PREFIX = "__"
SIGNAL_FIELDS = frozenset(
    {"__op", "__deleted", "__table", "__collection", "__db", "__schema", "__lsn", "__source_ts_ms", "__ts_ms"}
)
"""Any one of these marks a JSON object as a flattened Debezium record."""

_ENVELOPE_NAMES = frozenset({"op", "ts_ms", "ts_us", "ts_ns", "deleted"})
_SOURCE_NAMES = frozenset(
    {
        # common
        "version", "connector", "name", "ts_ms", "ts_us", "ts_ns", "snapshot", "db", "sequence",
        "schema", "table", "txId",
        # PostgreSQL
        "lsn", "xmin",
        # MongoDB
        "collection", "rs", "ord", "lsid", "txnNumber", "wallTime", "h", "tord", "stxnid",
        # Db2, SQL Server, Informix
        "change_lsn", "commit_lsn", "event_serial_no", "begin_lsn",
        # Oracle
        "scn", "commit_scn", "rs_id", "ssn", "redo_thread", "user_name", "row_id",
        # MySQL, MariaDB
        "server_id", "gtid", "file", "pos", "row", "thread", "query",
    }
)  # fmt: skip
METADATA_NAMES = _ENVELOPE_NAMES | _SOURCE_NAMES
"""Names that, after `__`, make a field the transform's metadata rather than a column."""

VALUE_SCHEMA_SUFFIX = ".Value"
TRUE_TEXTS = frozenset({"true"})


def is_flattened(body: Mapping[str, Any], schema: Mapping[str, Any] | None = None) -> bool:
    if debezium.is_envelope(body):
        return False
    if not SIGNAL_FIELDS.isdisjoint(body):
        return True
    return schema is not None and schema.get("type") == "struct" and _value_schema_name(schema) is not None


def parse_flattened(
    body: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    key_text: str | None,
    partition: int,
    offset: int,
    topic: str | None = None,
) -> ParsedRecord:
    """A flattened Debezium record → a change (or an ignored logical decoding message)."""
    metadata = {name[len(PREFIX) :]: value for name, value in body.items() if is_metadata(name)}
    columns = {name: value for name, value in body.items() if not is_metadata(name)}
    op = _op(metadata)
    if op == debezium.MESSAGE:
        return ignored(IgnoreClass.LOGICAL_DECODING_MESSAGE)
    source = _source(metadata)
    connector = debezium.text_field(source.get("connector"))
    if connector is None and "collection" in source:
        connector = mongodb.CONNECTOR
    is_mongodb = connector == mongodb.CONNECTOR
    # The columns of a MongoDB record are the document's fields, each unwrapped on its own: the
    # document itself is never an Extended JSON wrapper, even when its only field is `$oid`.
    row = (
        {name: extended_json.unwrap(value, f"row.{name}") for name, value in columns.items()}
        if is_mongodb
        else decode_struct(columns, schema)
    )

    row_key = None
    if op in debezium.ROW_OPS:
        row_key = mongodb.row_key(key_text, row) if is_mongodb else row_key_from_kafka_key(key_text)
        if row_key is None:
            raise RecordError(Reason.MISSING_KEY, "a row change needs a Kafka key that is a JSON object")
    before = row if op == "d" else None
    after = row if op in "cru" else None
    unavailable = tuple(name for name, value in columns.items() if after is not None and is_unavailable(value))
    return debezium.change_from_source(
        source,
        op,
        connector=connector,
        table=_source_table(source, schema, topic),
        event_ts_ms=debezium.timestamp_ms_field(metadata.get("ts_ms")),
        position=_position(connector, source, partition, offset),
        transaction=_transaction(metadata),
        row_key=row_key,
        before=before,
        after=after,
        unavailable_columns=unavailable,
        changed=debezium.changed_columns(op, before, after, unavailable),
    )


def is_metadata(name: str) -> bool:
    if not name.startswith(PREFIX):
        return False
    bare = name[len(PREFIX) :]
    return bare in METADATA_NAMES or bare.startswith(("source_", "transaction_"))


def _op(metadata: Mapping[str, Any]) -> str:
    deleted = metadata.get("deleted")
    if deleted is True or (isinstance(deleted, str) and deleted.lower() in TRUE_TEXTS):
        return "d"
    op = metadata.get("op")
    if op is None:
        return "u"
    if not isinstance(op, str) or (op != debezium.MESSAGE and op not in debezium.ROW_OPS and op != debezium.TRUNCATE):
        raise RecordError(Reason.UNKNOWN_OP, f"__op {op!r:.40} is not one of c, r, u, d, t, m")
    return op


def _source(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata as a `source` block: `source_x` (from `add.fields=source.x`) named `x`, and
    the envelope's own fields (op, ts_ms, ...) left out unless `source` gave them."""
    source = {name: value for name, value in metadata.items() if name in _SOURCE_NAMES - _ENVELOPE_NAMES}
    for name, value in metadata.items():
        if name.startswith("source_"):
            source[name[len("source_") :]] = value
    return source


def _transaction(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata as a `transaction` block: `transaction_x` (from `add.fields=transaction.x`) named `x`."""
    prefix = "transaction_"
    return {name[len(prefix) :]: value for name, value in metadata.items() if name.startswith(prefix)}


def _source_table(source: Mapping[str, Any], schema: Mapping[str, Any] | None, topic: str | None) -> str | None:
    named = debezium.source_table(source)
    if named is not None:
        return named
    schema_topic = _value_schema_name(schema)
    if schema_topic is not None:
        return _table_of_topic(schema_topic)
    return _table_of_topic(topic) if topic else None


def _value_schema_name(schema: Mapping[str, Any] | None) -> str | None:
    """The topic part of a converter schema named `<topic>.Value`, else None."""
    name = schema.get("name") if schema is not None else None
    if isinstance(name, str) and name.endswith(VALUE_SCHEMA_SUFFIX) and len(name) > len(VALUE_SCHEMA_SUFFIX):
        return name.removesuffix(VALUE_SCHEMA_SUFFIX)
    return None


def _table_of_topic(topic: str) -> str:
    segments = topic.split(".")
    return ".".join(segments[-2:])


_CONNECTOR_BY_POSITION_FIELD = (
    ("lsn", "postgresql"),
    ("event_serial_no", "sqlserver"),
    ("commit_lsn", "db2"),
    ("change_lsn", "db2"),
    ("commit_scn", "oracle"),
    ("scn", "oracle"),
    ("file", "mysql"),
)
"""Without `__connector`, the connector whose position a record's metadata holds: the first of these
fields present names it. SQL Server's LSNs without `event_serial_no` are ordered as Db2's, which
is the same order (`commit_lsn`, then `change_lsn`)."""


def _position(connector: str | None, source: Mapping[str, Any], partition: int, offset: int) -> str:
    if connector is None:
        connector = next((named for field, named in _CONNECTOR_BY_POSITION_FIELD if field in source), None)
    return debezium.source_position(connector, source, partition, offset)
