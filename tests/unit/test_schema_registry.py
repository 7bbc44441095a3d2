"""The Schema Registry client (udfs/schema_registry.py) with a stand-in for HTTP: what it asks, what
it keeps, and the reason of each failure. tests/unit/test_avro.py runs it against a real registry."""

import json
from collections.abc import Mapping

import pytest

from udfs.reasons import RecordError
from udfs.schema_registry import (
    RETRY_AFTER_SECONDS,
    Response,
    SchemaRegistry,
    registry_from_environment,
    registry_from_settings,
)

AVRO_ANSWER = Response(200, json.dumps({"schema": '"string"'}).encode())


class StandIn:
    """Answers each GET from a list of responses (an `OSError` is raised), recording the requests."""

    def __init__(self, *answers: Response | OSError) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __call__(self, url: str, headers: Mapping[str, str], timeout: float) -> Response:
        self.requests.append((url, dict(headers)))
        answer = self.answers.pop(0)
        if isinstance(answer, OSError):
            raise answer
        return answer


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def registry(
    *answers: Response | OSError, urls: tuple[str, ...] = ("http://r:8081",)
) -> tuple[SchemaRegistry, StandIn, Clock]:
    stand_in, clock = StandIn(*answers), Clock()
    return SchemaRegistry(urls, fetch=stand_in, clock=clock), stand_in, clock


def reason(client: SchemaRegistry, schema_id: int) -> str:
    with pytest.raises(RecordError) as raised:
        client.schema(schema_id)
    return raised.value.reason.value


def test_a_schema_is_fetched_once_per_id() -> None:
    client, stand_in, _ = registry(AVRO_ANSWER, AVRO_ANSWER)
    assert client.schema(7) is client.schema(7)
    assert client.schema(8).text == '"string"'
    assert [url for url, _ in stand_in.requests] == ["http://r:8081/schemas/ids/7", "http://r:8081/schemas/ids/8"]
    assert (client.schema(7).schema_type, client.schema(7).has_references) == ("AVRO", False)


def test_a_failure_is_remembered_for_a_while_then_asked_again() -> None:
    client, stand_in, clock = registry(ConnectionRefusedError("refused"), AVRO_ANSWER)
    assert reason(client, 7) == "schema_registry_unavailable"
    assert reason(client, 7) == "schema_registry_unavailable"  # from memory: no second request
    assert len(stand_in.requests) == 1
    clock.now += RETRY_AFTER_SECONDS
    assert client.schema(7).text == '"string"'


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Response(404, b'{"error_code":40403,"message":"Schema not found"}'), "unknown_schema_id"),
        (Response(401, b'{"message":"Unauthorized"}'), "schema_registry_unavailable"),
        (Response(503, b""), "schema_registry_unavailable"),
        (Response(200, b"<html>a proxy's page</html>"), "schema_registry_unavailable"),
        (TimeoutError("timed out"), "schema_registry_unavailable"),
    ],
    ids=["404", "401", "503", "not a registry", "timeout"],
)
def test_the_reason_of_each_failure(answer: Response | OSError, expected: str) -> None:
    client, _, _ = registry(answer)
    assert reason(client, 7) == expected


def test_the_next_url_is_asked_when_one_does_not_answer() -> None:
    client, stand_in, _ = registry(ConnectionRefusedError("refused"), AVRO_ANSWER, urls=("http://a", "http://b"))
    assert client.schema(7).text == '"string"'
    assert [url for url, _ in stand_in.requests] == ["http://a/schemas/ids/7", "http://b/schemas/ids/7"]


def test_the_schema_type_and_references_are_read() -> None:
    answer = {"schema": "syntax = 'proto3';", "schemaType": "PROTOBUF", "references": [{"name": "x"}]}
    client, _, _ = registry(Response(200, json.dumps(answer).encode()))
    schema = client.schema(7)
    assert (schema.schema_type, schema.has_references) == ("PROTOBUF", True)


def test_credentials_from_the_url_or_the_user_info_setting() -> None:
    from_url = registry_from_settings("https://ann:s%40cret@registry.example:8081/ccompat/, http://backup:8081")
    assert from_url is not None
    assert from_url.urls == ("https://registry.example:8081/ccompat", "http://backup:8081")
    assert from_url.authorization == "Basic YW5uOnNAY3JldA=="  # ann:s@cret
    from_setting = registry_from_settings("https://ann:old@registry.example", "bob:pw")
    assert from_setting is not None
    assert from_setting.authorization == "Basic Ym9iOnB3"  # bob:pw wins
    assert registry_from_settings("http://r:8081") == SchemaRegistry(("http://r:8081",))


def test_the_credentials_are_sent_and_never_shown() -> None:
    client = registry_from_settings("http://ann:secret@r:8081")
    assert client is not None
    stand_in = StandIn(ConnectionRefusedError("refused"))
    client.fetch = stand_in
    with pytest.raises(RecordError) as raised:
        client.schema(7)
    assert stand_in.requests[0][1]["Authorization"] == "Basic YW5uOnNlY3JldA=="
    assert "secret" not in raised.value.detail and "ann" not in raised.value.detail


def test_no_url_no_registry() -> None:
    assert registry_from_settings(None) is None
    assert registry_from_settings(" , ") is None
    assert registry_from_environment({}) is None


def test_one_registry_per_setting_for_the_process() -> None:
    environ = {"CDC_SCHEMA_REGISTRY_URL": "http://r:8081"}
    assert registry_from_environment(environ) is registry_from_environment(dict(environ))
    assert registry_from_environment({"CDC_SCHEMA_REGISTRY_URL": "http://other:8081"}) is not registry_from_environment(
        environ
    )
