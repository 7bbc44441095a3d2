"""JSON reading and writing with the exactness the row JSON contract needs.

orjson is several times faster than the standard library and is the judge of what is JSON: it
rejects NaN and Infinity, numbers beyond a double's range (`1e400`) and unpaired surrogate escapes
(`"\\ud800"`, text no UTF-8 column can hold). It reads every number with a fraction or an exponent
as a double and an integer beyond 64 bits as a float, rounding both silently; so a text holding
such a number is read again by `json`, which keeps integers exact and here keeps each fraction a
double cannot hold as a `decimal.Decimal` of the digits the source wrote.

A fraction stays a double when the double's shortest text is the same decimal number (3.14, 1e-5,
0.30000000000000004: every number of up to 15 significant digits, and every double's shortest
text); otherwise (123456789876543212345678987654321.110, 0.1000000000000000055511151231257827,
1e-400) it is a Decimal, which `dumps` writes as a JSON string of those digits (`str(Decimal)`,
trailing zeros kept): a long number in the row JSON would be read back through a double by many
readers (Spark's `get_json_object`, JavaScript, pandas), while a string casts exactly
(`cast(get_json_object(row, '$.amount') as decimal(38, 3))`).
"""

import json
import re
from decimal import Decimal
from typing import Any

import orjson

from udfs.reasons import Reason, RecordError

MAX_DETAIL_CHARS = 300

_NUMBER_BYTES_AS_ZERO = bytes.maketrans(b"123456789.eE+", b"0" * 13)
"""Every byte of a JSON number but the minus becomes "0": a minus starts a number or its
exponent, and is kept so that a date or an exponent alone ("0000-00-00", "0-000") stays apart."""
_RUN_BYTES = b"0-"
_RUN_REST = re.compile(rb"[0-]*")
_LONG_NUMBER_MARK = b"0" * 17
"""The mark of a number of at least 17 characters (bar a minus): the shortest texts of a fraction
a double may not hold (16 significant digits and a point or an exponent; 15 digits always fit)
and of an integer beyond 64 bits (20 digits, or a minus and 19; orjson reads up to 2**64 - 1 and
down to -2**63 exactly). A 16-digit `ts_us` leaves no mark."""
_TINY_EXPONENT_MARK = b"0-000"
"""The mark of an exponent of -100 or below: how a short text writes a number below a double's
normal range (2.2e-308), where fewer digits fit, down to none (1e-400 reads as 0.0)."""
_WIDE_INTEGER_CHARS = 20


def loads(text: str | bytes) -> Any:
    """Parse JSON text; NaN, Infinity, out-of-range numbers and unpaired surrogates are rejected,
    integers of any width stay exact, and a fraction a double cannot hold is a `Decimal`."""
    return exactly(text, loads_rounded(text))


def exactly(text: str | bytes, rounded: Any) -> Any:
    """`loads(text)`, given `rounded`, orjson's reading of the text (`loads_rounded(text)`): that
    reading unless the text holds a number orjson rounds, else the text read again by `json`."""
    if not _may_hold_inexact_number(text.encode() if isinstance(text, str) else text):
        return rounded
    try:
        return json.loads(text, parse_float=_exact_fraction, parse_constant=_reject_constant)
    except RecursionError:
        raise RecordError(Reason.INVALID_JSON, "nesting too deep") from None
    except ValueError as error:  # none known: orjson read it, and json reads what orjson does
        raise RecordError(Reason.INVALID_JSON, _describe(error)) from None


def loads_rounded(text: str | bytes) -> Any:
    """orjson's reading alone, what `loads` starts from: the same JSON is accepted and refused, but
    a fraction is always a double and an integer beyond 64 bits a float, rounded. For a caller that
    uses few of the values and reads the text again with `loads` when one of those is a float."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise RecordError(Reason.INVALID_JSON, _describe(error)) from None


def _exact_fraction(text: str) -> float | Decimal:
    """A JSON number with a fraction or an exponent: a double when it holds the number exactly
    (its shortest text has the same value), else the Decimal of the text."""
    number = float(text)
    shortest = repr(number)
    if shortest == text:  # what most writers of a double write: no Decimal needed to compare
        return number
    exact = Decimal(text)
    return number if Decimal(shortest) == exact else exact


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON text, keys in insertion order unless `sort_keys`; a Decimal is a string."""
    try:
        option = orjson.OPT_SORT_KEYS if sort_keys else 0
        return orjson.dumps(value, default=_decimal_text, option=option).decode()
    except TypeError:
        # Integers beyond 64 bits: the standard library writes them exactly.
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, default=_decimal_text)


def canonical(value: Any) -> str:
    """The canonical text of a key: keys sorted, no spaces (`row_key`)."""
    return dumps(value, sort_keys=True)


def shorten(text: str) -> str:
    """A detail message never carries a whole payload (the raw text is kept beside it)."""
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return text[:MAX_DETAIL_CHARS] + f"... ({len(text)} chars)"


def _may_hold_inexact_number(raw: bytes) -> bool:
    """Whether a number in the text (or in a string: harmless) is one orjson reads inexactly.

    Few texts have a marked run of number bytes, which one translation finds (about 1 µs per KB);
    the runs it does find (a 19-digit `ts_ns`, a double written with 17 digits) are each checked,
    so that only a text with an inexact number pays for `json`.
    """
    masked = raw.translate(_NUMBER_BYTES_AS_ZERO)
    for mark in (_LONG_NUMBER_MARK, _TINY_EXPONENT_MARK):
        found = masked.find(mark)
        while found >= 0:
            start, end = _run_around(masked, found, found + len(mark))
            if _is_inexact_number(raw[start:end]):
                return True
            found = masked.find(mark, end)
    return False


def _run_around(masked: bytes, start: int, end: int) -> tuple[int, int]:
    """The run of number bytes that holds `masked[start:end]`. A mark is found at or near its
    run's start (the first in it, after a minus or an exponent's mantissa), so the walk back is
    short; the run's end may be far (a string of a million digits) and a regex finds it."""
    while start > 0 and masked[start - 1] in _RUN_BYTES:
        start -= 1
    run_end = _RUN_REST.match(masked, end)
    return start, run_end.end() if run_end else end


def _is_inexact_number(run: bytes) -> bool:
    """Whether a run of number bytes is a number orjson would not read exactly. A run that is no
    number lies in a string; one that only looks like one there ("+1.5") costs a needless `json`."""
    digits = run[1:] if run.startswith(b"-") else run
    if digits.isdigit():
        return len(run) >= _WIDE_INTEGER_CHARS
    try:
        return isinstance(_exact_fraction(run.decode()), Decimal)
    except (ValueError, ArithmeticError):
        return False


def _decimal_text(value: Any) -> str:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _describe(error: Exception) -> str:
    return shorten(str(error))
