"""Stable codes for what happened to a landed record that did not become a change.

The codes are part of the product's contract (they appear in `cdc_quarantine.reason` and in the
ignore counts); the dbt `accepted_values` tests read `QUARANTINE_REASONS` through a test that
checks the YAML list equals this one. Add codes, never rename them.
"""

from enum import StrEnum


class Outcome(StrEnum):
    """Where a landed record goes."""

    CHANGE = "change"
    IGNORED = "ignored"
    QUARANTINE = "quarantine"


class Reason(StrEnum):
    """Why a record was quarantined."""

    INVALID_LANDING_LINE = "invalid_landing_line"
    """A line of a kcat file is not a JSON object with topic, partition and offset."""
    DESERIALIZATION_ERROR = "deserialization_error"
    """kcat reported `key_error` or `payload_error`: it could not deserialise the message."""
    INVALID_ENCODING = "invalid_encoding"
    """A Parquet key or value is not valid UTF-8 text."""
    INVALID_JSON = "invalid_json"
    """The payload (or key) is not valid JSON."""
    NOT_AN_ENVELOPE = "not_an_envelope"
    """Valid JSON, but no known message format (Debezium envelope, transaction marker, ...)."""
    INVALID_ENVELOPE = "invalid_envelope"
    """A Debezium envelope missing a field its op requires (source, after of a create, ...)."""
    UNKNOWN_OP = "unknown_op"
    """A Debezium envelope whose `op` is not one of c, r, u, d, t, m."""
    MISSING_KEY = "missing_key"
    """A row change whose key cannot be known: no usable Kafka key."""
    INVALID_VALUE = "invalid_value"
    """A value that does not decode to the logical type its schema declares."""
    UNKNOWN_QLIK_SCHEMA = "unknown_qlik_schema"
    """A Qlik data message with no metadata message to bind it to: none landed whose `schemaId`
    equals the data message's `messageSchemaId` (or the data message names no schema id)."""
    INVALID_WIRE_FORMAT = "invalid_wire_format"
    """A key or value in a Schema Registry's wire format (a zero magic byte, a 4-byte schema id) that
    is too short to hold the schema id, or bytes beside such a key or value whose first byte is
    not that magic byte."""
    NO_SCHEMA_REGISTRY = "no_schema_registry"
    """A key or value in a Schema Registry's wire format, and no registry configured
    (`CDC_SCHEMA_REGISTRY_URL`). A later build with a registry can read it."""
    SCHEMA_REGISTRY_UNAVAILABLE = "schema_registry_unavailable"
    """The Schema Registry did not answer (refused, timed out, an HTTP error other than 404): a
    later build can read the record once it does."""
    UNKNOWN_SCHEMA_ID = "unknown_schema_id"
    """The Schema Registry does not know the schema id the key or value names (it answered 404)."""
    UNSUPPORTED_SCHEMA = "unsupported_schema"
    """The registry's schema of the id is not one read here: a JSON Schema or Protobuf schema, an
    Avro schema with references to other subjects, or text that is no valid Avro schema."""
    INVALID_AVRO = "invalid_avro"
    """Avro bytes that do not decode with the writer schema their id names (cut short, bytes
    left over, a string that is not UTF-8, a union branch out of range, ...)."""


class IgnoreClass(StrEnum):
    """Records that are deliberately not row changes; counted, never lost."""

    TOMBSTONE = "tombstone"
    TRANSACTION_MARKER = "transaction_marker"
    LOGICAL_DECODING_MESSAGE = "logical_decoding_message"
    METADATA_MESSAGE = "metadata_message"


QUARANTINE_REASONS: tuple[str, ...] = tuple(reason.value for reason in Reason)
IGNORE_CLASSES: tuple[str, ...] = tuple(ignore_class.value for ignore_class in IgnoreClass)


class RecordError(Exception):
    """Raised inside the parsing core; turned into a quarantine row at the UDF boundary."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail
