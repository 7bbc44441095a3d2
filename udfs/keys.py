"""The canonical `row_key` of a change: the Kafka message key, decoded and written canonically."""

from collections.abc import Mapping

from udfs import json_text
from udfs.converter import load_message
from udfs.logical_types import decode_struct
from udfs.reasons import RecordError


def row_key_from_kafka_key(key_text: str | None) -> str | None:
    """`{"id":1001}` from a Debezium key with or without its schema; None when unusable.

    A key must be a JSON object with at least one column; anything else (no key, a bare string,
    text that is not JSON) cannot identify a row and is reported by the caller as `missing_key`.
    """
    if key_text is None:
        return None
    try:
        key, schema = load_message(key_text)
        if not isinstance(key, Mapping) or not key:
            return None
        return json_text.canonical(decode_struct(key, schema))
    except RecordError:
        return None
