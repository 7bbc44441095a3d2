"""JSON reading and writing with the exactness the row JSON contract needs.

orjson is several times faster than the standard library and is the judge of what is JSON: it
rejects NaN and Infinity, numbers beyond a double's range (`1e400`) and unpaired surrogate escapes
(`"\\ud800"`, text no UTF-8 column can hold). It reads an integer beyond 64 bits as a float,
silently rounding it, so a text that may hold one (a run of 20 digits, or of 19 after a minus) is
read again by `json`, which keeps integers exact.
"""

import json
from typing import Any

import orjson

from udfs.reasons import Reason, RecordError

MAX_DETAIL_CHARS = 300

_DIGITS_AND_MINUS_AS_ZERO = bytes.maketrans(b"123456789-", b"0000000000")
_WIDE_INTEGER_MARK = b"0" * 20
"""After the translation, the mark of a run of 20 digits or of a minus and 19 digits: the shortest
texts of integers beyond 64 bits (orjson reads up to 2**64 - 1 and down to -2**63 exactly)."""


def loads(text: str | bytes) -> Any:
    """Parse JSON text; NaN, Infinity, out-of-range numbers and unpaired surrogates are rejected,
    integers of any width stay exact."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise RecordError(Reason.INVALID_JSON, _describe(error)) from None
    if not _may_hold_wide_integer(text):
        return value
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise RecordError(Reason.INVALID_JSON, "nesting too deep") from None
    except ValueError as error:  # none known: orjson read it, and json reads what orjson does
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
    """The canonical text of a key: keys sorted, no spaces (`row_key`)."""
    return dumps(value, sort_keys=True)


def shorten(text: str) -> str:
    """A detail message never carries a whole payload (the raw text is kept beside it)."""
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return text[:MAX_DETAIL_CHARS] + f"... ({len(text)} chars)"


def _may_hold_wide_integer(text: str | bytes) -> bool:
    """A cheap over-approximation (strings and fractions count too) that costs a few µs per KB."""
    raw = text.encode() if isinstance(text, str) else text
    return _WIDE_INTEGER_MARK in raw.translate(_DIGITS_AND_MINUS_AS_ZERO)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _describe(error: Exception) -> str:
    return shorten(str(error))
