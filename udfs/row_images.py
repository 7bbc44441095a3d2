"""Carry values forward through a key's events: the full row each event leaves behind.

An event may not know some column values: PostgreSQL's TOAST placeholder, a Qlik column whose
mask bit is clear. Such a column keeps the value the previous event left. A MongoDB update without
a full document carries only a patch (`ParsedRecord.patch`) that changes the fields it names in
the previous document. Either way the row after an event depends on every earlier event of its
key: a fold that SQL windows cannot express.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from udfs import json_text

DELETE = "d"
MAX_ARRAY_PADDING = 1_500_000
"""MongoDB refuses an update that pads an array with more nulls than this, so no event does."""


class KeyEvent(NamedTuple):
    """One event of a key, in source order: its op, after image, unknown columns and patch."""

    op: str
    after: str | None
    unavailable_columns: Sequence[str] | None
    patch: str | None = None
    """JSON `{"set": {path: value}, "unset": [path], "truncate": {path: size}}`, for an event
    without `after` (see `udfs.events.ParsedRecord.patch`)."""


def resolve_rows(events: Iterable[KeyEvent]) -> list[str | None]:
    """The full row JSON after each event (None after a delete), in the events' order.

    A column the event does not know takes the value the previous row had; with no previous row
    (the first event seen, or the first after a delete) its placeholder stays, so nothing unknown
    is passed off as a real value. A patch changes the previous row; with none it applies to an
    empty document, so the row holds just what the patch sets (all that is known of it).
    """
    rows: list[str | None] = []
    previous: dict[str, Any] | None = None
    for event in events:
        if event.op != DELETE and event.after is None and event.patch is not None:
            # `previous` is this fold's own parsed copy: changing it in place is safe.
            previous = apply_patch(previous if previous is not None else {}, json_text.loads(event.patch))
            rows.append(json_text.dumps(previous))
            continue
        if event.op == DELETE or event.after is None:
            previous = None
            rows.append(None)
            continue
        if not event.unavailable_columns:
            rows.append(event.after)
            previous = json_text.loads(event.after)
            continue
        row = json_text.loads(event.after)
        if previous is not None:
            for column in event.unavailable_columns:
                if column in previous:
                    row[column] = previous[column]
        previous = row
        rows.append(json_text.dumps(row))
    return rows


def apply_patch(document: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a normalised patch to `document` in place, MongoDB's way, and return it.

    Arrays are truncated first, then paths unset, then set. A path is dotted; a segment of digits
    indexes an array. Setting creates missing sub-documents and pads an array with nulls up to the
    index; unsetting removes a document field and nulls an array element (as `$unset` does); a
    path that leads nowhere is left alone.
    """
    for path, size in (patch.get("truncate") or {}).items():
        target = _resolve(document, path.split("."))
        if isinstance(target, list):
            del target[size:]
    for path in patch.get("unset") or ():
        *parents, last = path.split(".")
        container = _resolve(document, parents)
        if isinstance(container, dict):
            container.pop(last, None)
        elif isinstance(container, list) and _is_index(last) and int(last) < len(container):
            container[int(last)] = None
    for path, value in (patch.get("set") or {}).items():
        _set_path(document, path.split("."), value)
    return document


def _resolve(document: Any, segments: Sequence[str]) -> Any:
    """The value at a path, or None when the path leads nowhere."""
    current = document
    for segment in segments:
        if isinstance(current, dict):
            current = current.get(segment)
        elif isinstance(current, list) and _is_index(segment) and int(segment) < len(current):
            current = current[int(segment)]
        else:
            return None
    return current


def _set_path(document: dict[str, Any], segments: Sequence[str], value: Any) -> None:
    container: Any = document
    for index, segment in enumerate(segments):
        is_last = index == len(segments) - 1
        if isinstance(container, list):
            if not _is_index(segment) or int(segment) - len(container) >= MAX_ARRAY_PADDING:
                return  # MongoDB refuses a field name on an array, and such padding: nothing to apply
            position = int(segment)
            container.extend([None] * (position + 1 - len(container)))
            if is_last:
                container[position] = value
            elif not isinstance(container[position], (dict, list)):
                container[position] = {}
            container = container[position]
        else:
            if is_last:
                container[segment] = value
            elif not isinstance(container.get(segment), (dict, list)):
                container[segment] = {}
            container = container[segment]


def _is_index(segment: str) -> bool:
    """At most 18 ASCII digits: `str.isdigit` alone also takes "²", which `int` refuses, and
    `int` refuses more than 4300 digits; no array reaches a 19-digit index."""
    return len(segment) <= 18 and segment.isascii() and segment.isdigit()
