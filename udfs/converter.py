"""Kafka Connect's JsonConverter message form: `{"schema": ..., "payload": ...}`.

With `schemas.enable=true` every message carries its schema block beside its payload, and the
block is most of the text (a PostgreSQL change event: about 2.2 KB of 2.7). Every message of a
table version carries the same block, so `load_message` reads it once per distinct text.
"""

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from udfs import json_text
from udfs.reasons import RecordError

_SCHEMA_PREFIX = '{"schema":'
_PAYLOAD_SEPARATOR = ',"payload":'


def unwrap_converter(message: Any) -> tuple[Any, Mapping[str, Any] | None]:
    """Split a JsonConverter message `{"schema": ..., "payload": ...}` into (payload, schema).

    A message written without the converter's schema comes back as (message, None).
    """
    if isinstance(message, Mapping) and "payload" in message and message.keys() <= {"schema", "payload"}:
        schema = message.get("schema")
        return message["payload"], schema if isinstance(schema, Mapping) else None
    return message, None


def load_message(text: str) -> tuple[Any, Mapping[str, Any] | None]:
    """`unwrap_converter(json_text.loads(text))`, the schema block read once per distinct text.

    The schema that comes back is shared between messages: read it, never change it. One
    difference: a payload nested exactly as deep as orjson reads (1,024 levels) is read here,
    while the whole text, one level deeper, is refused as `invalid_json`.
    """
    parts = converter_parts(text)
    if parts is not None:
        schema_text, payload_text = parts
        try:
            schema = load_schema(schema_text)
            payload = json_text.loads(payload_text)
        except RecordError:
            pass  # a cut inside the schema, or no JSON at all: the whole text decides, and says why
        else:
            return payload, schema if isinstance(schema, Mapping) else None
    return unwrap_converter(json_text.loads(text))


def converter_parts(text: str) -> tuple[str, str] | None:
    """The schema and payload texts of a compact converter message, as the converter writes it.

    The cut is at the first `,"payload":`. Within a JSON string a quote is escaped, so that text
    occurs only between members; if it is not the top-level one, the schema text left of it has
    an unclosed brace and does not parse (the caller then reads the whole text).
    """
    if not (text.startswith(_SCHEMA_PREFIX) and text.endswith("}")):
        return None
    cut = text.find(_PAYLOAD_SEPARATOR, len(_SCHEMA_PREFIX))
    if cut < 0:
        return None
    return text[len(_SCHEMA_PREFIX) : cut], text[cut + len(_PAYLOAD_SEPARATOR) : -1]


@lru_cache(maxsize=256)
def load_schema(schema_text: str) -> Any:
    return json_text.loads(schema_text)
