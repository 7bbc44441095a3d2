"""A Confluent-compatible Schema Registry, asked for the writer schema of an Avro message by its id.

Only `GET <url>/schemas/ids/<id>` is used: the one call every Confluent-compatible registry
answers (Confluent's, Apicurio's `/apis/ccompat/v7`, Karapace, Redpanda's). A schema id names one
schema for good, so each answer is kept for the life of the process; a failure is remembered for
`RETRY_AFTER_SECONDS` only, so that a registry that is down costs one timeout per id and
interval, not one per record, and is asked again once it may be back.

Set from the environment, as Confluent's own clients name the settings (`schema.registry.url`,
`basic.auth.user.info`):
- `CDC_SCHEMA_REGISTRY_URL`: the registry's base URL, or several separated by commas (tried in
  order while one does not answer); credentials in it (`https://user:password@host`) are used
  for basic authentication;
- `CDC_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO`: `user:password` for basic authentication (wins over
  credentials in the URL).

Every failure is a `RecordError` whose reason says whether the record can be read later:
`schema_registry_unavailable` and `no_schema_registry` can (`RETRYABLE_REASONS`); an
`unknown_schema_id` (the registry answered 404) or an `unsupported_schema` cannot, from this
registry.
"""

import base64
import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from udfs import json_text
from udfs.reasons import Reason, RecordError

URL_VARIABLE = "CDC_SCHEMA_REGISTRY_URL"
USER_INFO_VARIABLE = "CDC_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO"
TIMEOUT_SECONDS = 5.0
"""Per request: a registry answers a schema in milliseconds; more waits only delay the build."""
RETRY_AFTER_SECONDS = 30.0
"""How long a failed id is answered from memory before the registry is asked again."""
ACCEPT = "application/vnd.schemaregistry.v1+json, application/json"

RETRYABLE_REASONS = frozenset({Reason.SCHEMA_REGISTRY_UNAVAILABLE, Reason.NO_SCHEMA_REGISTRY})
"""The reasons of records a later build can read once the registry answers (or is configured)."""


@dataclass(frozen=True)
class RegisteredSchema:
    """A registry's answer for one id: the schema's text and its type (`AVRO` unless it says)."""

    schema_id: int
    schema_type: str
    text: str
    has_references: bool


class Response:
    """What one HTTP GET gave: a status and a body, or raised `OSError` (no answer)."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body


Fetch = Callable[[str, Mapping[str, str], float], Response]
"""An HTTP GET of a URL with headers and a timeout; raises `OSError` when nothing answers."""


def http_get(url: str, headers: Mapping[str, str], timeout: float) -> Response:
    request = urllib.request.Request(url, headers=dict(headers), method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Response(answer.status, answer.read())
    except urllib.error.HTTPError as error:  # an answer all the same: 404, 401, 500, ...
        return Response(error.code, error.read() or b"")


@dataclass
class SchemaRegistry:
    """The registries of one setting, with the schemas they gave (and their recent failures)."""

    urls: tuple[str, ...]
    """Base URLs without credentials, tried in order."""
    authorization: str | None = None
    """The `Authorization` header's value, when there are credentials."""
    timeout: float = TIMEOUT_SECONDS
    fetch: Fetch = http_get
    clock: Callable[[], float] = time.monotonic
    _schemas: dict[int, RegisteredSchema] = field(default_factory=dict, repr=False)
    _failures: dict[int, tuple[float, RecordError]] = field(default_factory=dict, repr=False)

    def schema(self, schema_id: int) -> RegisteredSchema:
        """The schema of `schema_id`; raises `RecordError` with the reason it cannot be had."""
        known = self._schemas.get(schema_id)
        if known is not None:
            return known
        failure = self._failures.get(schema_id)
        if failure is not None and self.clock() - failure[0] < RETRY_AFTER_SECONDS:
            raise failure[1]
        try:
            found = self._ask(schema_id)
        except RecordError as error:
            self._failures[schema_id] = (self.clock(), error)
            raise
        self._failures.pop(schema_id, None)
        self._schemas[schema_id] = found
        return found

    def _ask(self, schema_id: int) -> RegisteredSchema:
        unanswered: list[str] = []
        for url in self.urls:
            try:
                response = self.fetch(f"{url}/schemas/ids/{schema_id}", self._headers(), self.timeout)
            except (
                OSError,
                ValueError,
                http.client.HTTPException,
            ) as error:  # refused, timed out, no such host, no HTTP
                unanswered.append(f"{url}: {_reason_of(error)}")
                continue
            if response.status == 404:
                raise RecordError(Reason.UNKNOWN_SCHEMA_ID, f"schema id {schema_id} is not in the registry at {url}")
            if response.status != 200:
                # 401/403 (credentials), 5xx: the registry may answer the next build.
                unanswered.append(f"{url} answered HTTP {response.status}{_error_message(response.body)}")
                continue
            return _registered_schema(schema_id, response.body, url)
        detail = f"schema id {schema_id}: no schema registry answered ({'; '.join(unanswered)})"
        raise RecordError(Reason.SCHEMA_REGISTRY_UNAVAILABLE, json_text.shorten(detail))

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": ACCEPT}
        if self.authorization is not None:
            headers["Authorization"] = self.authorization
        return headers


def registry_from_settings(url_setting: str | None, user_info: str | None = None) -> SchemaRegistry | None:
    """The registry `CDC_SCHEMA_REGISTRY_URL` (and its credentials) name; None when it names none."""
    urls: list[str] = []
    url_user_info = None
    for url in (url_setting or "").split(","):
        parts = urllib.parse.urlsplit(url.strip())
        if not parts.netloc:
            continue
        if parts.username is not None and url_user_info is None:
            url_user_info = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        # Credentials out of the URL: it is shown in the quarantine's details.
        host = parts.netloc.rsplit("@", 1)[-1]
        urls.append(urllib.parse.urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", "")))
    if not urls:
        return None
    credentials = user_info or url_user_info
    authorization = f"Basic {base64.b64encode(credentials.encode()).decode()}" if credentials else None
    return SchemaRegistry(tuple(urls), authorization)


_registries: dict[tuple[str | None, str | None], SchemaRegistry | None] = {}


def registry_from_environment(environ: Mapping[str, str] | None = None) -> SchemaRegistry | None:
    """The registry the environment names, one per setting for the life of the process (so its
    schemas are fetched once); None when `CDC_SCHEMA_REGISTRY_URL` is not set."""
    environ = os.environ if environ is None else environ
    setting = (environ.get(URL_VARIABLE), environ.get(USER_INFO_VARIABLE))
    if setting not in _registries:
        _registries[setting] = registry_from_settings(*setting)
    return _registries[setting]


def _registered_schema(schema_id: int, body: bytes, url: str) -> RegisteredSchema:
    """The `{"schema": text, "schemaType"?, "references"?}` of a registry's answer."""
    try:
        answer: Any = json.loads(body)
    except ValueError:
        answer = None
    text = answer.get("schema") if isinstance(answer, Mapping) else None
    if not isinstance(answer, Mapping) or not isinstance(text, str):
        # Not a registry's answer (a proxy's page, a wrong path in the URL): a setting to fix.
        detail = f"schema id {schema_id}: {url} answered, but not as a schema registry does: {body[:80]!r}"
        raise RecordError(Reason.SCHEMA_REGISTRY_UNAVAILABLE, detail)
    schema_type = answer.get("schemaType")
    return RegisteredSchema(
        schema_id=schema_id,
        schema_type=schema_type.upper() if isinstance(schema_type, str) else "AVRO",
        text=text,
        has_references=bool(answer.get("references")),
    )


def _reason_of(error: BaseException) -> str:
    reason = getattr(error, "reason", None)  # urllib.error.URLError wraps the socket's error
    return str(reason if reason is not None else error) or type(error).__name__


def _error_message(body: bytes) -> str:
    try:
        message = json.loads(body).get("message")
    except (ValueError, AttributeError):
        return ""
    return f": {message}" if isinstance(message, str) else ""
