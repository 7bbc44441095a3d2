"""JSON reading and writing with the exactness the row JSON contract needs.

orjson is several times faster than the standard library; it refuses integers beyond 64 bits, so
those (rare) texts fall back to `json`, which keeps them exact.
"""

import json
from typing import Any

import orjson

from udfs.reasons import Reason, RecordError

MAX_DETAIL_CHARS = 300


def loads(text: str | bytes) -> Any:
    """Parse JSON text; NaN and Infinity are rejected, big integers stay exact."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as error:
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            raise RecordError(Reason.INVALID_JSON, _describe(error)) from None


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON text, keys in insertion order unless `sort_keys`."""
    try:
        option = orjson.OPT_SORT_KEYS if sort_keys else 0
        return orjson.dumps(value, option=option).decode()
    except TypeError:
        # Integers beyond 64 bits: the standard library writes them exactly.
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)


def canonical(value: Any) -> str:
    """The canonical text of a key: keys sorted, no spaces (SPEC §5 `row_key`)."""
    return dumps(value, sort_keys=True)


def shorten(text: str) -> str:
    """A detail message never carries a whole payload (the raw text is kept beside it)."""
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return text[:MAX_DETAIL_CHARS] + f"... ({len(text)} chars)"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _describe(error: Exception) -> str:
    return shorten(str(error))
