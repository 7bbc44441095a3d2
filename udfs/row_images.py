"""Carry values forward through a key's events: the full row each event leaves behind.

An event may not know some column values: PostgreSQL's TOAST placeholder, a Qlik column whose
mask bit is clear. Such a column keeps the value the previous event left, so the row after an
event depends on every earlier event of its key: a fold that SQL windows cannot express.
"""

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from udfs import json_text

DELETE = "d"


class KeyEvent(NamedTuple):
    """One event of a key, in source order: its op, after image and unknown columns."""

    op: str
    after: str | None
    unavailable_columns: Sequence[str] | None


def resolve_rows(events: Iterable[KeyEvent]) -> list[str | None]:
    """The full row JSON after each event (None after a delete), in the events' order.

    A column the event does not know takes the value the previous row had; with no previous row
    (the first event seen, or the first after a delete) its placeholder stays, so nothing unknown
    is passed off as a real value.
    """
    rows: list[str | None] = []
    previous: dict[str, Any] | None = None
    for event in events:
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
