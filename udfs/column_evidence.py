"""What a change event says about its table's columns beyond the row JSON its parse writes: the
JsonConverter schema of the row's fields, and a MongoDB event's documents as the connector wrote
them (Extended JSON wrappers kept: `{"$numberLong": "7"}` says more than the `7` it unwraps to).

`cdc-dbt scaffold` types a mart by them. `udfs.records.parse_record` reads both on its way and
keeps neither (the row JSON holds decoded values), so these functions read the message a second
time, by the formats' own rules (`debezium.is_envelope`, `flattened.is_flattened`,
`flattened.is_metadata`): where an envelope keeps its row is known here, in the parsing core, once.
"""

from collections.abc import Mapping
from typing import Any

from udfs import debezium, flattened, json_text
from udfs.logical_types import struct_field_schemas
from udfs.reasons import RecordError


def row_field_schemas(body: Mapping[str, Any], schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The field schemas of a row by the converter's schema: the envelope's `after` (or `before`)
    struct, or a flattened record's own fields less the transform's metadata. None without a
    schema, or with one that types no field of the row."""
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
    `updateDescription.updatedFields`; a dotted path names a nested field, not a column); a
    flattened record's own fields."""
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
    """A document the connector wrote as JSON text (MongoDB's `after`) or as an object."""
    if isinstance(value, str):
        try:
            value = json_text.loads(value)
        except RecordError:
            return None
    return value if isinstance(value, Mapping) else None
