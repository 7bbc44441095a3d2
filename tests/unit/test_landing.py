import json

import pytest

from udfs.landing import decode_kafka_bytes, parse_kcat_line


def kcat_line(**fields: object) -> str:
    record: dict[str, object] = {"topic": "t", "partition": 1, "offset": 7, "tstype": "create", "ts": 1000, "broker": 0}
    record.update(fields)
    return json.dumps(record)


def test_plain_kcat_record() -> None:
    landed = parse_kcat_line(kcat_line(key='{"id":1}', payload='{"op":"c"}', headers=["h1", "v1", "h2", "v2"]))
    assert (landed.topic, landed.partition, landed.offset, landed.kafka_ts_ms) == ("t", 1, 7, 1000)
    assert (landed.key, landed.payload) == ('{"id":1}', '{"op":"c"}')
    assert landed.headers == (("h1", "v1"), ("h2", "v2"))
    assert landed.reason is None


def test_without_broker_timestamp_and_with_header_map() -> None:
    line = json.dumps({"topic": "t", "partition": 0, "offset": 0, "key": None, "payload": None,
                       "headers": {"a": ["1", "2"], "b": ["3"]}})  # fmt: skip
    landed = parse_kcat_line(line)
    assert landed.kafka_ts_ms is None
    assert landed.headers == (("a", "1"), ("a", "2"), ("b", "3"))
    assert landed.payload is None


def test_avro_deserialised_key_and_payload_become_json_text() -> None:
    landed = parse_kcat_line(kcat_line(key={"id": 1}, key_schema_id=3, payload={"op": "c"}, value_schema_id=4))
    assert (landed.key, landed.payload) == ('{"id":1}', '{"op":"c"}')


def test_deserialisation_error_is_kept_with_its_reason() -> None:
    landed = parse_kcat_line(kcat_line(key=None, payload=None, payload_error="Avro/Schema-registry decode failed"))
    assert landed.reason == "deserialization_error"
    assert "decode failed" in (landed.detail or "")
    assert (landed.topic, landed.offset) == ("t", 7)


@pytest.mark.parametrize(
    "line",
    ["not json", "[1,2]", json.dumps({"topic": "t", "partition": 0}), kcat_line(offset="7"), kcat_line(partition=True)],
)
def test_line_that_is_no_record_is_invalid(line: str) -> None:
    landed = parse_kcat_line(line)
    assert landed.reason == "invalid_landing_line"
    assert landed.detail


def test_kafka_bytes_must_be_utf8() -> None:
    assert decode_kafka_bytes("é".encode(), "value") == ("é", None)
    assert decode_kafka_bytes(None, "key") == (None, None)
    text, detail = decode_kafka_bytes(b"\xff\xfe", "value")
    assert text is None
    assert detail is not None and "UTF-8" in detail


LONG_FRACTION = "0.1000000000000000055511151231257827"
"""A fraction no double holds: orjson alone would read it as 0.1."""


@pytest.mark.parametrize(
    ("member", "text", "expected"),
    [
        ("payload", f'{{"amount":{LONG_FRACTION}}}', f'{{"amount":"{LONG_FRACTION}"}}'),
        ("key", f'{{"id":{2**64}}}', f'{{"id":{2**64}}}'),
        ("headers", f'["h",{LONG_FRACTION}]', None),
    ],
)
def test_numbers_orjson_would_round_are_read_exactly_in_the_members_used(
    member: str, text: str, expected: str | None
) -> None:
    line = kcat_line()[:-1] + f', "{member}": {text}}}'
    landed = parse_kcat_line(line)
    if member == "headers":
        assert landed.headers == (("h", f'"{LONG_FRACTION}"'),)
    else:
        assert getattr(landed, member) == expected


def test_an_offset_beyond_64_bits_is_out_of_range_not_missing() -> None:
    landed = parse_kcat_line(kcat_line(offset=2**64))
    assert landed.reason == "invalid_landing_line"
    assert f"offset {2**64} is out of Kafka's range" in (landed.detail or "")


def test_a_rounded_number_in_a_member_not_used_changes_nothing() -> None:
    line = kcat_line(key='{"id":1}', payload='{"op":"c"}')
    with_rounded_broker = line.replace('"broker": 0', f'"broker": {LONG_FRACTION}')
    assert with_rounded_broker != line
    assert parse_kcat_line(with_rounded_broker) == parse_kcat_line(line)
