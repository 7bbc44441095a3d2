"""Debezium MongoDB change events: documents instead of rows, in the connector's two generations.

- 1.x (oplog): `after` is the Extended JSON text of the whole document for creates and snapshot
  reads; an update carries only `patch`, the oplog entry (`{"$v": 1, "$set": {...}, "$unset":
  {...}}`, MongoDB 5's `{"$v": 2, "diff": {...}}`, or a whole replacement document) and `filter`
  (`{"_id": ...}`); a delete carries only `filter`.
- 2.x (change streams): `after` (whole document) when the connector looked it up; else the update's
  `updateDescription` (`updatedFields`, `removedFields`, `truncatedArrays`); `before` when the
  collection keeps pre-images.

Values are unwrapped from Extended JSON (`udfs.extended_json`). An `after`, when present, is the
whole document and is taken as is; without one, an update's change goes to `ParsedRecord.patch`
as `{"set": {path: value}, "unset": [path], "truncate": {path: size}}` (dotted paths, applied to
the previous document by `udfs.row_images`, arrays truncated first, then unset, then set) and
`after` stays null.

The row key is `{"_id": <id>}` with the id unwrapped like any value (an ObjectId becomes its hex
text, a `$numberLong` an integer), written canonically: the same text whether the id came from the
document (`after`, `before`, `filter`) or from the Kafka key, whose `id` field holds the id's
Extended JSON text (`{"id": "{\\"$oid\\": \\"...\\"}"}`, `{"id": "\\"text id\\""}`,
`{"id": "1004"}`), with or without the converter's schema. The document is read first, the key
when the event has no document. An ObjectId and a string of the same 24 hex digits therefore share
a key (so does Paimon's reader of these events); MongoDB allows both in one collection, nobody
does that on purpose.
"""

from collections.abc import Mapping
from typing import Any

from udfs import debezium, extended_json, json_text
from udfs.converter import load_message
from udfs.events import ParsedRecord
from udfs.reasons import Reason, RecordError

CONNECTOR = "mongodb"
ID = "_id"
KEY_FIELDS = ("id", "_id")
"""Field of the Kafka key holding the document id: Debezium writes `id`."""

Patch = dict[str, Any]
"""`{"set": {path: value}, "unset": [path], "truncate": {path: size}}`."""

_REPLACEMENT_IGNORED = frozenset({"$v"})
"""The oplog format version, not a field of a replacement document."""
_MISSING = object()


def is_mongodb_envelope(body: Mapping[str, Any], source: Any) -> bool:
    return "op" in body and isinstance(source, Mapping) and source.get("connector") == CONNECTOR


def parse_mongodb(
    body: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    key_text: str | None,
    partition: int,
    offset: int,
) -> ParsedRecord:
    """A Debezium MongoDB envelope → a change. `schema` (the converter's) is not needed: every
    document field is Extended JSON text whatever the schema says."""
    op = debezium.row_op(body)
    source = debezium.source_block(body, op)
    before = _document(body, "before")
    after = _document(body, "after")
    change: Patch | None = None
    if op == "u":
        change, replacement = _update_change(body)
        after = after if after is not None else replacement
        if after is None and change is None:
            raise RecordError(Reason.INVALID_ENVELOPE, "op 'u' without after, patch or updateDescription")
    if op in "cr" and after is None:
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} without an after document")
    if op in "dt" and after is not None:
        raise RecordError(Reason.INVALID_ENVELOPE, f"op {op!r} with an after document")

    key = None
    if op in debezium.ROW_OPS:
        key = row_key(key_text, after, before, _document(body, "filter"))
        if key is None:
            raise RecordError(Reason.MISSING_KEY, "no _id in the event's documents and no usable Kafka key")
    return debezium.change_record(
        body,
        source,
        op,
        row_key=key,
        before=before,
        after=after,
        changed=changed_fields(op, before, after, change),
        patch=json_text.dumps(change) if change is not None and after is None else None,
        partition=partition,
        offset=offset,
    )


def row_key(key_text: str | None, *documents: Mapping[str, Any] | None) -> str | None:
    """`{"_id":...}` from the first document that has an `_id`, else from the Kafka key."""
    for document in documents:
        if document is not None and ID in document:
            return json_text.canonical({ID: document[ID]})
    document_id = id_from_kafka_key(key_text)
    return None if document_id is None else json_text.canonical({ID: document_id})


def id_from_kafka_key(key_text: str | None) -> Any:
    """The unwrapped document id of a Debezium MongoDB key; None when there is none."""
    if key_text is None:
        return None
    try:
        key, _schema = load_message(key_text)
        if not isinstance(key, Mapping):
            return None
        raw = next((key[name] for name in KEY_FIELDS if key.get(name) is not None), None)
        if not isinstance(raw, str):
            return extended_json.unwrap(raw, "key.id")
        try:
            value = json_text.loads(raw)
        except RecordError:  # not JSON: an id written as bare text
            return raw
        return extended_json.unwrap(value, "key.id")
    except RecordError:
        return None


def changed_fields(
    op: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, change: Patch | None
) -> tuple[str, ...] | None:
    """Top-level fields an event set: all of a create's; for an update those its change names, or
    those that differ between full before and after documents; else unknown (None)."""
    if op in "cr" and after is not None:
        return tuple(after)
    if op != "u":
        return None
    if change is not None:
        paths = [*change["set"], *change["unset"], *change["truncate"]]
        return tuple(dict.fromkeys(path.split(".", 1)[0] for path in paths))
    if before is not None and after is not None:
        names = dict.fromkeys([*after, *before])
        return tuple(name for name in names if after.get(name, _MISSING) != before.get(name, _MISSING))
    return None


def new_patch() -> Patch:
    return {"set": {}, "unset": [], "truncate": {}}


def update_description_patch(description: Mapping[str, Any]) -> Patch:
    """A 2.x `updateDescription` → the normalised patch."""
    patch = new_patch()
    updated = _json_field(description.get("updatedFields"), "updateDescription.updatedFields")
    if updated is not None:
        if not isinstance(updated, Mapping):
            raise RecordError(Reason.INVALID_ENVELOPE, "updateDescription.updatedFields must be an object")
        for path, value in updated.items():
            patch["set"][path] = extended_json.unwrap(value, f"updateDescription.updatedFields.{path}")
    removed = _json_list(description.get("removedFields"), "updateDescription.removedFields")
    for path in removed:
        patch["unset"].append(_path(path, "updateDescription.removedFields"))
    truncated = _json_list(description.get("truncatedArrays"), "updateDescription.truncatedArrays")
    for item in truncated:
        if not isinstance(item, Mapping):
            raise RecordError(Reason.INVALID_ENVELOPE, "updateDescription.truncatedArrays holds a non-object")
        field = _path(item.get("field"), "updateDescription.truncatedArrays")
        patch["truncate"][field] = _size(item.get("size"))
    return patch


def oplog_patch(entry: Mapping[str, Any]) -> Patch | None:
    """A 1.x `patch` (unwrapped) → the normalised patch; None when it is a replacement document."""
    operators = {name for name in entry if name.startswith("$")} - _REPLACEMENT_IGNORED
    if entry.get("$v") == 2 and "diff" in entry:
        patch = new_patch()
        _apply_diff(entry["diff"], "", patch)
        return patch
    if not operators:
        return None
    unknown = operators - {"$set", "$unset"}
    if unknown:
        raise RecordError(Reason.INVALID_ENVELOPE, f"patch operator {sorted(unknown)[0]!r:.40} is not $set or $unset")
    patch = new_patch()
    for name, operand in (("$set", entry.get("$set")), ("$unset", entry.get("$unset"))):
        if operand is None:
            continue
        if not isinstance(operand, Mapping):
            raise RecordError(Reason.INVALID_ENVELOPE, f"patch {name} must be an object")
        if name == "$set":
            patch["set"].update(operand)
        else:
            patch["unset"].extend(operand)
    return patch


def _update_change(body: Mapping[str, Any]) -> tuple[Patch | None, dict[str, Any] | None]:
    """An update's partial change and, for a 1.x replacement, the whole new document."""
    description = body.get("updateDescription")
    if isinstance(description, Mapping):
        return update_description_patch(description), None
    entry = _document(body, "patch")
    if entry is None:
        return None, None
    patch = oplog_patch(entry)
    if patch is None:
        return None, {name: value for name, value in entry.items() if name not in _REPLACEMENT_IGNORED}
    return patch, None


def _apply_diff(diff: Any, prefix: str, patch: Patch) -> None:
    """MongoDB 5 oplog `$v: 2` diff: `u`/`i` set fields, `d` removes them, `s<field>` recurses into
    a sub-document, or into an array when it holds `a: true` (`l` its new length, `u<n>`/`s<n>`
    its elements)."""
    if not isinstance(diff, Mapping):
        raise RecordError(Reason.INVALID_ENVELOPE, f"patch diff at {prefix or 'the root'!r} is not an object")
    is_array = diff.get("a") is True
    for name, value in diff.items():
        if is_array and name == "a":
            continue
        if is_array and name == "l":
            patch["truncate"][prefix.rstrip(".")] = _size(value)
        elif name in ("u", "i") and isinstance(value, Mapping):
            patch["set"].update({prefix + field: item for field, item in value.items()})
        elif name == "d" and isinstance(value, Mapping):
            patch["unset"].extend(prefix + field for field in value)
        elif is_array and name[:1] == "u" and name[1:].isdigit():
            patch["set"][prefix + name[1:]] = value
        elif name[:1] == "s" and len(name) > 1:
            _apply_diff(value, f"{prefix}{name[1:]}.", patch)
        else:
            raise RecordError(Reason.INVALID_ENVELOPE, f"patch diff entry {name!r:.40} is not understood")


def _document(body: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, (str, Mapping)):
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} must be a document, not {type(value).__name__}")
    try:
        document = extended_json.loads(value, name)
    except RecordError as error:
        if error.reason is Reason.INVALID_JSON:
            raise RecordError(Reason.INVALID_JSON, f"{name}: {error.detail}") from None
        raise
    if not isinstance(document, dict):
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} must be a document, not {type(document).__name__}")
    return document


def _json_field(value: Any, name: str) -> Any:
    """A field the connector writes as JSON text (io.debezium.data.Json) or as a value."""
    if not isinstance(value, str):
        return value
    try:
        return json_text.loads(value)
    except RecordError as error:
        raise RecordError(Reason.INVALID_JSON, f"{name}: {error.detail}") from None


def _json_list(value: Any, name: str) -> list[Any]:
    items = _json_field(value, name)
    if items is None:
        return []
    if not isinstance(items, list):
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} must be an array, not {type(items).__name__}")
    return items


def _path(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise RecordError(Reason.INVALID_ENVELOPE, f"{name} holds {value!r:.40}, not a field path")
    return value


def _size(value: Any) -> int:
    size = debezium.int_field(value)
    if size is None or size < 0:
        raise RecordError(Reason.INVALID_ENVELOPE, f"array size {value!r:.40} is not a non-negative integer")
    return size
