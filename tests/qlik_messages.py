"""Qlik Replicate Kafka messages for tests: a table's metadata message and data messages, as landed
text, or as dicts (bare, or in Replicate's envelope) for a test to change or unwrap."""

import json
from typing import Any

DEFAULT_HEADERS = {
    "changeSequence": "",
    "timestamp": "",
    "streamPosition": "",
    "transactionId": "",
    "changeMask": None,
    "columnMask": None,
    "externalSchemaId": None,
}


def qlik_envelope(message_type: str, schema_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """A message in the `atMSG` envelope: `MD` (metadata) or `DT` (data)."""
    return {"magic": "atMSG", "type": message_type, "headers": None, "messageSchemaId": schema_id,
            "messageSchema": None, "message": message}  # fmt: skip


ColumnSpec = tuple[str, int] | tuple[str, int, int, int, int]
"""A column of a metadata message: (type, primaryKeyPosition), its length, precision and scale then
30, 10 and 0; or (type, length, precision, scale, primaryKeyPosition) where they matter."""


def qlik_metadata_message(
    schema_id: str, schema: str, table: str, columns: dict[str, ColumnSpec], *, table_version: int = 1
) -> dict[str, Any]:
    """The bare metadata message of a table version; `columns` in ordinal order (ColumnSpec)."""
    table_columns = {}
    for ordinal, (name, spec) in enumerate(columns.items(), start=1):
        column_type, length, precision, scale, key_position = spec if len(spec) == 5 else (spec[0], 30, 10, 0, spec[-1])
        table_columns[name] = {"ordinal": ordinal, "type": column_type, "length": length, "precision": precision,
                               "scale": scale, "primaryKeyPosition": key_position}  # fmt: skip
    return {"schemaId": schema_id,
            "lineage": {"server": "replicate-01", "task": "tests", "schema": schema, "table": table,
                        "tableVersion": table_version, "timestamp": "2024-03-04T07:59:00.000"},
            "tableStructure": {"tableColumns": table_columns}, "dataSchema": ""}  # fmt: skip


def qlik_metadata(
    schema_id: str, schema: str, table: str, columns: dict[str, ColumnSpec], *, table_version: int = 1
) -> str:
    """The metadata message of a table version in its envelope, as landed (qlik_metadata_message)."""
    message = qlik_metadata_message(schema_id, schema, table, columns, table_version=table_version)
    return json.dumps(qlik_envelope("MD", schema_id, message))


def qlik_data_message(
    operation: str, data: dict[str, Any] | None, before: dict[str, Any] | None = None, **headers: Any
) -> dict[str, Any]:
    """A bare data message; `headers` override the empty defaults (changeSequence, timestamp, transactionId, ...)."""
    return {"data": data, "beforeData": before, "headers": {"operation": operation, **DEFAULT_HEADERS, **headers}}


def qlik_data(
    schema_id: str | None, operation: str, data: dict[str, Any], before: dict[str, Any] | None = None, **headers: Any
) -> str:
    """A data message in its envelope, as landed (qlik_data_message); bare when `schema_id` is None."""
    message = qlik_data_message(operation, data, before, **headers)
    return json.dumps(message if schema_id is None else qlik_envelope("DT", schema_id, message))
