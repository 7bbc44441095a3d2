import json

from udfs.logical_types import UNAVAILABLE_VALUE
from udfs.row_images import KeyEvent, apply_patch, resolve_rows


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


def patch(
    set_: dict[str, object] | None = None, unset: list[str] | None = None, truncate: dict[str, int] | None = None
) -> str:
    return json.dumps({"set": set_ or {}, "unset": unset or [], "truncate": truncate or {}})


def test_patch_changes_only_what_it_names_and_keeps_the_rest_of_the_previous_document() -> None:
    events = [
        KeyEvent("c", row(_id=1, a=1, nested={"x": 1, "y": 2}), []),
        KeyEvent("u", None, [], patch({"b": 2, "nested.x": 10})),
        KeyEvent("u", None, [], patch(unset=["a", "nested.y"])),
    ]
    rows = [json.loads(text or "") for text in resolve_rows(events)]
    assert rows == [
        {"_id": 1, "a": 1, "nested": {"x": 1, "y": 2}},
        {"_id": 1, "a": 1, "nested": {"x": 10, "y": 2}, "b": 2},
        {"_id": 1, "nested": {"x": 10}, "b": 2},
    ]


def test_patch_paths_reach_into_arrays() -> None:
    document: dict[str, object] = {"tags": ["a", "b", "c", "d"], "items": [{"qty": 1}, {"qty": 2}]}
    apply_patch(document, {"set": {"tags.1": "B", "items.1.qty": 5}, "unset": ["tags.0"], "truncate": {"tags": 3}})
    assert document == {"tags": [None, "B", "c"], "items": [{"qty": 1}, {"qty": 5}]}


def test_truncate_comes_before_set_so_appended_elements_survive() -> None:
    document: dict[str, object] = {"tags": [1, 2, 3, 4]}
    apply_patch(document, {"set": {"tags.2": "new"}, "unset": [], "truncate": {"tags": 2}})
    assert document == {"tags": [1, 2, "new"]}


def test_set_creates_missing_sub_documents_and_pads_arrays_with_nulls() -> None:
    document: dict[str, object] = {"list": [1], "scalar": 5}
    apply_patch(document, {"set": {"a.b.c": 1, "list.3": 4, "scalar.x": 2, "list.x": 9}})
    assert document == {"list": [1, None, None, 4], "scalar": {"x": 2}, "a": {"b": {"c": 1}}}


def test_paths_that_lead_nowhere_are_left_alone() -> None:
    document: dict[str, object] = {"a": [1], "b": 2}
    apply_patch(document, {"unset": ["missing.x", "a.5", "b.c"], "truncate": {"b": 0, "missing": 1}})
    assert document == {"a": [1], "b": 2}


def test_patch_without_a_previous_document_holds_just_what_it_sets() -> None:
    events = [
        KeyEvent("c", row(_id=1, a=1), []),
        KeyEvent("d", None, []),
        KeyEvent("u", None, [], patch({"b": 2}, unset=["a"])),
    ]
    resolved = resolve_rows(events)
    assert resolved[1] is None
    assert json.loads(resolved[2] or "") == {"b": 2}


def test_full_after_after_a_patch_replaces_the_document() -> None:
    events = [KeyEvent("u", None, [], patch({"b": 2})), KeyEvent("u", row(_id=1, c=3), [], None)]
    assert resolve_rows(events)[1] == row(_id=1, c=3)


def test_delete_with_a_patch_is_still_a_delete() -> None:
    assert resolve_rows([KeyEvent("c", row(_id=1), []), KeyEvent("d", None, [], patch({"b": 2}))]) == [row(_id=1), None]
