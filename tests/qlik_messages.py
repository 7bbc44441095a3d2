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


def qlik_metadata_message(
    schema_id: str, schema: str, table: str, columns: dict[str, tuple[str, int]]
) -> dict[str, Any]:
    """The bare metadata message of table version 1; `columns` maps each name to (type, primaryKeyPosition)."""
    table_columns = {
        name: {"ordinal": ordinal, "type": column_type, "length": 30, "precision": 10, "scale": 0,
               "primaryKeyPosition": key_position}
        for ordinal, (name, (column_type, key_position)) in enumerate(columns.items(), start=1)
    }  # fmt: skip
    return {"schemaId": schema_id,
            "lineage": {"server": "replicate-01", "task": "tests", "schema": schema, "table": table,
                        "tableVersion": 1, "timestamp": "2024-03-04T07:59:00.000"},
            "tableStructure": {"tableColumns": table_columns}, "dataSchema": ""}  # fmt: skip


def qlik_metadata(schema_id: str, schema: str, table: str, columns: dict[str, tuple[str, int]]) -> str:
    """The metadata message of table version 1 in its envelope, as landed (qlik_metadata_message)."""
    return json.dumps(qlik_envelope("MD", schema_id, qlik_metadata_message(schema_id, schema, table, columns)))


def qlik_data_message(
    operation: str, data: dict[str, Any] | None, before: dict[str, Any] | None = None, **headers: Any
) -> dict[str, Any]:
    """A bare data message; `headers` override the empty defaults (changeSequence, timestamp, transactionId, ...)."""
    return {"data": data, "beforeData": before, "headers": {"operation": operation, **DEFAULT_HEADERS, **headers}}


def qlik_data(
    schema_id: str, operation: str, data: dict[str, Any], before: dict[str, Any] | None = None, **headers: Any
) -> str:
    """A data message in its envelope, as landed (qlik_data_message)."""
    return json.dumps(qlik_envelope("DT", schema_id, qlik_data_message(operation, data, before, **headers)))
