"""One entry point for every landed record: detect its format and parse it, never raising."""

import base64
import binascii
from collections.abc import Mapping

from udfs import debezium, flattened, mongodb, qlik, transactions
from udfs.avro import message_texts
from udfs.converter import load_message
from udfs.events import ParsedRecord, ignored, quarantined
from udfs.fast_path import parse_common_record
from udfs.keys import row_key_from_kafka_key
from udfs.reasons import IgnoreClass, Reason, RecordError
from udfs.schema_registry import SchemaRegistry, registry_from_environment


def parse_record(
    key: str | None, payload: str | None, partition: int, offset: int, topic: str | None = None
) -> ParsedRecord:
    """Parse the key and payload text of one Kafka record (format detected per record, docs/message-formats.md).

    `topic` names the table of a flattened record that carries no `__table` (udfs.flattened).
    The common records take a fast path (`udfs.fast_path`) to the same result.
    """
    common = parse_common_record(key, payload, partition, offset)
    return common if common is not None else parse_record_generally(key, payload, partition, offset, topic)


def parse_record_bytes(
    key: bytes | None,
    value: bytes | None,
    partition: int,
    offset: int,
    topic: str | None = None,
    registry: SchemaRegistry | None = None,
) -> ParsedRecord:
    """`parse_record` of a record as Spark's Kafka source lands it, its key and value as bytes.

    Text is read as it is; Avro in a Schema Registry's wire format (a zero magic byte first, which
    no JSON text has) is read as the JsonConverter's text of the same record (`udfs.avro`), with
    its schema from `registry`, by default the one the environment names
    (`udfs.schema_registry`). A key or value that can be neither is quarantined, with its reason.
    """
    try:
        key_text, payload_text = message_texts(key, value, registry or registry_from_environment())
    except RecordError as error:
        return quarantined(error)
    return parse_record(key_text, payload_text, partition, offset, topic)


def parse_landed_record(
    key: str | None,
    payload: str | None,
    partition: int,
    offset: int,
    topic: str | None = None,
    is_key_base64: bool | None = False,
    is_payload_base64: bool | None = False,
) -> ParsedRecord:
    """`parse_record` of a record as a build holds it: its key and payload as text, or, each where its
    flag says so, as the base64 of its bytes (a key or value in a Schema Registry's wire format;
    `stg_kafka__parquet_records`). Text records take `parse_record` as they always did; a record
    with bytes takes `parse_record_bytes`."""
    if not (is_key_base64 or is_payload_base64):
        return parse_record(key, payload, partition, offset, topic)
    try:
        key_bytes = _landed_bytes(key, is_key_base64)
        value_bytes = _landed_bytes(payload, is_payload_base64)
    except (binascii.Error, UnicodeEncodeError) as error:  # not written by the build: a damaged table
        return quarantined(RecordError(Reason.INVALID_ENCODING, f"the landed base64 does not decode: {error}"))
    return parse_record_bytes(key_bytes, value_bytes, partition, offset, topic)


def _landed_bytes(text: str | None, is_base64: bool | None) -> bytes | None:
    if text is None:
        return None
    if not is_base64:
        return text.encode("utf-8")
    # Spark's base64() breaks lines every 76 characters by default (spark.sql.chunkBase64String.enabled).
    return base64.b64decode("".join(text.split()), validate=True)


def parse_record_generally(
    key: str | None, payload: str | None, partition: int, offset: int, topic: str | None = None
) -> ParsedRecord:
    """`parse_record` by its rules alone, without the fast path for the common records."""
    try:
        return _parse(key, payload, partition, offset, topic)
    except RecordError as error:
        return quarantined(error)
    except RecursionError:
        return quarantined(RecordError(Reason.INVALID_JSON, "nesting too deep"))


def _parse(key: str | None, payload: str | None, partition: int, offset: int, topic: str | None) -> ParsedRecord:
    if payload is None:
        return ignored(IgnoreClass.TOMBSTONE, row_key=row_key_from_kafka_key(key))
    body, schema = load_message(payload)
    if body is None:
        return ignored(IgnoreClass.TOMBSTONE, row_key=row_key_from_kafka_key(key))
    if not isinstance(body, Mapping):
        raise RecordError(Reason.NOT_AN_ENVELOPE, f"the payload is a JSON {type(body).__name__}, not an object")
    if debezium.is_envelope(body):
        if mongodb.is_mongodb_envelope(body, body.get("source")):
            return mongodb.parse_mongodb(body, schema, key, partition, offset)
        return debezium.parse_envelope(body, schema, key, partition, offset)
    # Qlik before flattened rows: a bare Qlik message has top-level fields a flattened row could have.
    if qlik.is_qlik_message(body):
        return qlik.parse_unbound(body)
    # Flattened rows before transaction markers: a row of a table with `status` and `id` columns
    # could look like a marker, while a marker never has the transform's `__` fields.
    if flattened.is_flattened(body, schema):
        return flattened.parse_flattened(body, schema, key, partition, offset, topic)
    if transactions.is_transaction_marker(body):
        return transactions.parse_transaction_marker(body)
    raise RecordError(
        Reason.NOT_AN_ENVELOPE,
        "no known message format (expected a Debezium envelope, transaction marker, flattened record or Qlik message)",
    )
