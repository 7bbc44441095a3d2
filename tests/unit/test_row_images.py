import json

from udfs.logical_types import UNAVAILABLE_VALUE
from udfs.row_images import KeyEvent, resolve_rows


def row(**values: object) -> str:
    return json.dumps(values)


def test_complete_events_pass_through() -> None:
    events = [KeyEvent("c", row(id=1, a="x"), []), KeyEvent("u", row(id=1, a="y"), [])]
    assert resolve_rows(events) == [row(id=1, a="x"), row(id=1, a="y")]


def test_unavailable_column_keeps_the_previous_value_across_several_events() -> None:
    events = [
        KeyEvent("r", row(id=1, note="long text", qty=1), []),
        KeyEvent("u", row(id=1, note=UNAVAILABLE_VALUE, qty=2), ["note"]),
        KeyEvent("u", row(id=1, note=UNAVAILABLE_VALUE, qty=3), ["note"]),
    ]
    rows = [json.loads(text) for text in resolve_rows(events) if text]
    assert [r["note"] for r in rows] == ["long text"] * 3
    assert [r["qty"] for r in rows] == [1, 2, 3]


def test_delete_forgets_the_row_so_nothing_carries_across_it() -> None:
    events = [
        KeyEvent("c", row(id=1, note="before delete"), []),
        KeyEvent("d", None, []),
        KeyEvent("u", row(id=1, note=UNAVAILABLE_VALUE), ["note"]),
    ]
    resolved = resolve_rows(events)
    assert resolved[1] is None
    assert json.loads(resolved[2] or "")["note"] == UNAVAILABLE_VALUE


def test_unknown_value_without_history_keeps_its_placeholder() -> None:
    resolved = resolve_rows([KeyEvent("u", row(id=1, note=UNAVAILABLE_VALUE), ["note"])])
    assert json.loads(resolved[0] or "")["note"] == UNAVAILABLE_VALUE
