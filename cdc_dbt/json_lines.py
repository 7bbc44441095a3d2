"""What `cdc-dbt sql` prints: each result row as one JSON object per line, the same whether the
query ran in this process or on the warm server."""

import datetime as dt
import decimal
import json
import sys
from collections.abc import Iterable
from typing import Any

NESTED_SERVER_TYPES = ("ARRAY_TYPE", "MAP_TYPE", "STRUCT_TYPE")


def write_json_lines(rows: Iterable[dict[str, Any]]) -> None:
    for row in rows:
        sys.stdout.write(json.dumps(row, default=json_value, ensure_ascii=False) + "\n")


def json_value(value: Any) -> Any:
    """Spark values JSON has no type for: timestamps as ISO-8601, decimals as exact text."""
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", errors="backslashreplace")
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def from_server_value(type_name: str, value: Any) -> Any:
    """A value as a HiveServer2 client receives it, as the in-process session gives it: the
    server sends timestamps, decimals and nested values as text."""
    if value is None or not isinstance(value, str):
        return value
    if type_name == "TIMESTAMP_TYPE":
        return dt.datetime.fromisoformat(value)
    if type_name == "DATE_TYPE":
        return dt.date.fromisoformat(value)
    if type_name == "DECIMAL_TYPE":
        return decimal.Decimal(value)
    if type_name in NESTED_SERVER_TYPES:
        return json.loads(value)
    return value
