"""Which metadata message a held Qlik data message is read with, for what reads landed records
without Spark (`cdc-dbt scaffold`, and the tests that follow a record through the build).

The build binds in SQL, across records (models/intermediate/int_qlik_records_bound.sql): that
model is the definition, and this module is its rule in Python. tests/unit/test_qlik_binding.py
holds the two to the same answers on the same rows: those of the model's dbt unit tests
(models/intermediate/_int_qlik_records_bound__unit_tests.yml).

- An enveloped data message binds to the metadata message whose `schemaId` equals its
  `messageSchemaId` (any copy: Replicate republishes a version's metadata at each task start;
  the earliest by topic, partition and offset is taken).
- A data message that names no schema (a bare one) binds to a metadata message of its own topic
  whose column names (the keys of `tableColumns`) are exactly the keys of its `data` and
  `beforeData`; among those, the newest below it in its partition, else the earliest by
  (partition, offset).

Column names are read from the landed text as the model's `get_json_object` reads them: at the
top level of a bare message, under `message` for an enveloped metadata message.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from udfs import json_text
from udfs.reasons import RecordError

ColumnNames = tuple[str, ...]
"""Sorted and distinct, as the model's `cdc_json_key_set` writes them."""


class MetadataMessage(NamedTuple):
    """A landed Qlik metadata message (the parse ignored it as `metadata_message`)."""

    topic: str | None
    partition: int
    offset: int
    schema_id: str
    payload: str


class QlikBinder:
    """Collects the metadata messages landed, then answers, per held data message, the metadata
    payload to read it with (None: its metadata has not landed)."""

    def __init__(self) -> None:
        self._by_schema_id: dict[str, tuple[tuple[str, int, int], str]] = {}
        self._by_columns: dict[tuple[str, ColumnNames], list[MetadataMessage]] = {}

    def add_metadata(self, message: MetadataMessage) -> None:
        order = (message.topic or "", message.partition, message.offset)
        known = self._by_schema_id.get(message.schema_id)
        if known is None or order < known[0]:
            self._by_schema_id[message.schema_id] = (order, message.payload)
        if message.topic is not None:
            key = (message.topic, metadata_column_names(message.payload))
            self._by_columns.setdefault(key, []).append(message)

    def metadata_for(
        self, topic: str | None, partition: int, offset: int, schema_id: str | None, payload: str
    ) -> str | None:
        """The metadata payload a data message held as `unknown_qlik_schema` is read with."""
        if schema_id is not None:
            known = self._by_schema_id.get(schema_id)
            return known[1] if known is not None else None
        if topic is None:
            return None
        candidates = self._by_columns.get((topic, data_column_names(payload)), [])
        if not candidates:
            return None
        return min(candidates, key=lambda metadata: preference(metadata, partition, offset)).payload


def preference(metadata: MetadataMessage, partition: int, offset: int) -> tuple[bool, int, int, int]:
    """The model's ordering of a bare data message's candidates: the smallest wins."""
    is_below = metadata.partition == partition and metadata.offset < offset
    return not is_below, -metadata.offset if is_below else 0, metadata.partition, metadata.offset


def metadata_column_names(payload: str) -> ColumnNames:
    """`tableStructure.tableColumns`' keys, of an enveloped (`message.`) or bare metadata message."""
    body = _object(payload)
    message = body.get("message")
    columns = _path(message, "tableStructure", "tableColumns") if isinstance(message, Mapping) else None
    return _key_set(columns if columns is not None else _path(body, "tableStructure", "tableColumns"))


def data_column_names(payload: str) -> ColumnNames:
    """The keys of a bare data message's `data` and `beforeData`."""
    body = _object(payload)
    return _key_set(body.get("data"), body.get("beforeData"))


def _object(payload: str) -> Mapping[str, Any]:
    try:
        body = json_text.loads(payload)
    except RecordError:
        return {}
    return body if isinstance(body, Mapping) else {}


def _path(value: Any, *names: str) -> Any:
    for name in names:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value


def _key_set(*objects: Any) -> ColumnNames:
    return tuple(sorted({name for value in objects if isinstance(value, Mapping) for name in value}))
