"""`udfs.converter.load_message` reads what `json.loads` then `unwrap_converter` would, faster."""

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from udfs import json_text
from udfs.converter import load_message, unwrap_converter
from udfs.logical_types import decode_struct
from udfs.reasons import RecordError


def read_whole(text: str) -> tuple[Any, Any] | str:
    """What the whole text reads as, or the reason it is refused."""
    try:
        return unwrap_converter(json_text.loads(text))
    except RecordError as error:
        return error.reason.value


def read_cut(text: str) -> tuple[Any, Any] | str:
    try:
        return load_message(text)
    except RecordError as error:
        return error.reason.value


@pytest.mark.parametrize(
    "text",
    [
        # The converter's form, and a schema that is no object (no schema then).
        '{"schema":{"type":"struct","fields":[]},"payload":{"id":1}}',
        '{"schema":null,"payload":{"id":1}}',
        '{"schema":"text","payload":null}',
        # `,"payload":` inside the schema: the first cut leaves an unclosed brace.
        '{"schema":{"parameters":{"payload":"x"},"type":"struct"},"payload":{"id":2}}',
        '{"schema":{"default":{"a":1,"payload":{"b":2}}},"payload":{"id":3}}',
        # ... and inside a string, escaped: never a cut.
        '{"schema":{"doc":"a,\\"payload\\":b"},"payload":{"id":4}}',
        # A repeated member: the whole text's last one wins.
        '{"schema":{},"payload":{"id":5},"payload":{"id":6}}',
        '{"schema":{},"payload":{"id":5},"schema":{"type":"x"}}',
        # Integers beyond 64 bits stay exact, in the payload and in the schema.
        '{"schema":{"default":123456789012345678901234},"payload":{"id":123456789012345678901234}}',
        # Not the converter's form, or not JSON: the whole text decides.
        '{"schema": {}, "payload": {"id": 7}}',
        '{"schema":{},"payload":{"id":8}} ',
        '{"schema":{},"payload":{"id":9},"other":1}',
        '{"schema":{},"payload":{"id":10}',
        '{"schema":{},"payload":}',
        '{"schema":{"a":NaN},"payload":{}}',
        '{"schema":{},"payload":{"text":"\\ud800"}}',
        '{"payload":{"id":11}}',
        '{"id":12}',
    ],
)
def test_reads_as_the_whole_text(text: str) -> None:
    assert read_cut(text) == read_whole(text)


def test_a_payload_at_the_nesting_limit_is_read_though_the_whole_text_is_not() -> None:
    deepest = "[" * 1024 + "]" * 1024
    text = '{"schema":{},"payload":' + deepest + "}"
    assert read_whole(text) == "invalid_json"
    payload, schema = load_message(text)
    assert schema == {}
    depth = 0
    while payload:  # walked, not compared: comparing 1,024 nested lists overflows Python's stack
        payload, depth = payload[0], depth + 1
    assert (payload, depth) == ([], 1023)
    deeper = "[" + deepest + "]"
    assert read_cut('{"schema":{},"payload":' + deeper + "}") == "invalid_json"


def test_messages_of_one_schema_text_share_its_schema() -> None:
    first_schema = load_message('{"schema":{"type":"struct","name":"shared"},"payload":{"id":1}}')[1]
    second_schema = load_message('{"schema":{"type":"struct","name":"shared"},"payload":{"id":2}}')[1]
    assert first_schema == {"type": "struct", "name": "shared"}
    assert second_schema is first_schema


def compact(value: Any) -> str:
    """JSON as the converter writes it (orjson cannot write integers beyond 64 bits)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


member_names = st.sampled_from(["schema", "payload", "type", "fields", "a"]) | st.text(max_size=4)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(member_names, children, max_size=3),
    max_leaves=8,
)


@given(json_values, json_values, st.lists(st.tuples(member_names, json_values), max_size=2))
def test_any_schema_and_payload_read_as_the_whole_text(
    schema: Any, payload: Any, extra_members: list[tuple[str, Any]]
) -> None:
    text = '{"schema":' + compact(schema) + ',"payload":' + compact(payload)
    text += "".join(f",{compact(name)}:{compact(value)}" for name, value in extra_members)
    text += "}"
    assert read_cut(text) == read_whole(text)


def test_a_field_schema_with_a_name_of_no_type_leaves_its_value_alone() -> None:
    damaged = {"type": "struct", "fields": [{"field": "a", "name": ["not", "a", "name"], "type": {"x": 1}}]}
    assert decode_struct({"a": 1, "b": 2}, damaged) == {"a": 1, "b": 2}
