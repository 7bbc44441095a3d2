"""MongoDB Extended JSON (v1 strict mode, v2 canonical and relaxed modes) → plain JSON values.

The Debezium MongoDB connector writes documents (`after`, `before`, `patch`, `filter`,
`updatedFields`, the `id` of its keys) as Extended JSON text. A wrapper is an object whose keys are
exactly one of the shapes below; any other object is a document and is unwrapped field by field.

- `{"$oid": "5eb6..."}` → `"5eb6..."` (the 24 hex digits);
- `{"$numberInt": "7"}`, `{"$numberLong": "7"}` → `7`;
- `{"$numberDouble": "1.5"}` → `1.5`; `"NaN"`, `"Infinity"` and `"-Infinity"` stay text (JSON has
  no such numbers, and writing them as null would lose them);
- `{"$numberDecimal": "3.140"}` → `"3.140"`: text exactly as written, never a binary float;
- `{"$date": 1533868558652}`, `{"$date": {"$numberLong": "1533868558652"}}`,
  `{"$date": "2018-08-10T10:35:58.652+08:00"}` → `"2018-08-10T02:35:58.652Z"`: ISO-8601 in UTC
  with milliseconds (BSON's precision); a date outside years 1-9999, which ISO text cannot hold,
  keeps its epoch milliseconds as an integer;
- `{"$timestamp": {"t": 1736997330, "i": 2}}` → `{"t": 1736997330, "i": 2}`: BSON's internal
  (oplog) timestamp, seconds and increment both kept;
- `{"$binary": {"base64": ..., "subType": "04"}}` or legacy `{"$binary": ..., "$type": "4"}` →
  the UUID text for subtype 4 (UUID), else the base64 text unchanged;
- `{"$uuid": "..."}` → the UUID text, lower case;
- `{"$regularExpression": {"pattern": "^a", "options": "i"}}` or legacy
  `{"$regex": "^a", "$options": "i"}` → `"/^a/i"`;
- `{"$symbol": "s"}` → `"s"`; `{"$code": "f()"}` → `"f()"`;
  `{"$code": "f()", "$scope": {...}}` → `{"code": "f()", "scope": {...}}`;
- `{"$dbPointer": {"$ref": "ns", "$id": {"$oid": "..."}}}` → `{"$ref": "ns", "$id": "..."}`, the
  shape of a DBRef document (whose `$id` is unwrapped like any field);
- `{"$minKey": 1}`, `{"$maxKey": 1}` → `"MinKey"`, `"MaxKey"` (the BSON type names);
- `{"$undefined": true}` → null.

A wrapper whose content does not fit its type raises `RecordError(INVALID_VALUE)` naming the path.
"""

import base64
import binascii
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from udfs import json_text
from udfs.reasons import Reason, RecordError

NON_FINITE_DOUBLES = frozenset({"NaN", "Infinity", "-Infinity"})
"""Doubles JSON cannot carry as numbers: kept as these exact texts."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)
_UUID_SUBTYPE = 4


def loads(text: str | Mapping[str, Any], what: str = "document") -> Any:
    """Parse Extended JSON text (or take an already parsed object) and unwrap it."""
    value = json_text.loads(text) if isinstance(text, str) else text
    return unwrap(value, what)


def unwrap(value: Any, path: str = "value") -> Any:
    """The plain value of an Extended JSON value; documents and arrays are unwrapped throughout."""
    if isinstance(value, list):
        return [unwrap(item, f"{path}[{index}]") for index, item in enumerate(value)]
    if not isinstance(value, Mapping):
        return value
    converter = _WRAPPERS.get(frozenset(value))
    if converter is not None:
        try:
            return converter(value, path)
        except RecordError:
            raise
        except (ValueError, TypeError, KeyError, ArithmeticError, binascii.Error) as error:
            detail = f"{path}: {_describe(value)} is not valid Extended JSON: {error}"
            raise RecordError(Reason.INVALID_VALUE, detail) from None
    return {name: unwrap(item, f"{path}.{name}") for name, item in value.items()}


def format_date(epoch_ms: int) -> str | int:
    """`2018-08-10T02:35:58.652Z`; outside years 1-9999 (which ISO text cannot hold) the integer."""
    try:
        moment = _EPOCH + timedelta(milliseconds=epoch_ms)
    except OverflowError:
        return epoch_ms
    return moment.isoformat(timespec="milliseconds").removesuffix("+00:00") + "Z"


def _oid(value: Mapping[str, Any], _path: str) -> str:
    oid = value["$oid"]
    if not isinstance(oid, str):
        raise TypeError(f"expected hex text, got {type(oid).__name__}")
    return oid


def _integer(value: Mapping[str, Any], _path: str) -> int:
    (text,) = value.values()
    return _integer_text(text)


def _integer_text(text: Any) -> int:
    if isinstance(text, bool):
        raise TypeError("expected digits, got a boolean")
    if isinstance(text, int):
        return text
    if not isinstance(text, str):
        raise TypeError(f"expected digits, got {type(text).__name__}")
    return int(text)


def _double(value: Mapping[str, Any], _path: str) -> float | str:
    text = value["$numberDouble"]
    if text in NON_FINITE_DOUBLES:
        return str(text)
    if isinstance(text, bool) or not isinstance(text, (str, int, float, Decimal)):
        raise TypeError(f"expected a number as text, got {type(text).__name__}")
    number = float(text)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError("a non-finite double must be written NaN, Infinity or -Infinity")
    return number


def _decimal(value: Mapping[str, Any], _path: str) -> str:
    text = value["$numberDecimal"]
    if not isinstance(text, str):
        raise TypeError(f"expected decimal text, got {type(text).__name__}")
    try:
        Decimal(text)
    except InvalidOperation:
        raise ValueError("not a decimal number") from None
    return text


def _date(value: Mapping[str, Any], _path: str) -> str | int:
    moment = value["$date"]
    if isinstance(moment, Mapping) and moment.keys() == {"$numberLong"}:
        return format_date(_integer_text(moment["$numberLong"]))
    if isinstance(moment, str):
        parsed = datetime.fromisoformat(moment)
        if parsed.tzinfo is None:  # relaxed Extended JSON always carries a zone; none means UTC
            parsed = parsed.replace(tzinfo=UTC)
        return format_date((parsed - _EPOCH) // _MILLISECOND)
    if isinstance(moment, float) and moment.is_integer():
        return format_date(int(moment))
    return format_date(_integer_text(moment))


def _timestamp(value: Mapping[str, Any], _path: str) -> dict[str, int]:
    stamp = value["$timestamp"]
    if not isinstance(stamp, Mapping):
        raise TypeError("expected an object of t and i")
    return {"t": _integer_text(stamp["t"]), "i": _integer_text(stamp["i"])}


def _binary(value: Mapping[str, Any], _path: str) -> str:
    content = value["$binary"]
    if isinstance(content, Mapping):  # canonical v2: {"$binary": {"base64": ..., "subType": "04"}}
        encoded, subtype = content["base64"], content["subType"]
    else:  # legacy v1: {"$binary": ..., "$type": "4"}
        encoded, subtype = content, value["$type"]
    if not isinstance(encoded, str) or not isinstance(subtype, str):
        raise TypeError("expected base64 text and a hex subtype")
    raw = base64.b64decode(encoded, validate=True)
    if int(subtype, 16) == _UUID_SUBTYPE and len(raw) == 16:
        return str(uuid.UUID(bytes=raw))
    return encoded


def _uuid(value: Mapping[str, Any], _path: str) -> str:
    return str(uuid.UUID(str(value["$uuid"])))


def _regular_expression(value: Mapping[str, Any], _path: str) -> str:
    if "$regularExpression" in value:
        regex = value["$regularExpression"]
        if not isinstance(regex, Mapping):
            raise TypeError("expected an object of pattern and options")
        pattern, options = regex["pattern"], regex.get("options", "")
    else:
        pattern, options = value["$regex"], value["$options"]
    if not isinstance(pattern, str) or not isinstance(options, str):
        raise TypeError("expected a pattern and options as text")
    return f"/{pattern}/{options}"


def _text(value: Mapping[str, Any], _path: str) -> str:
    (text,) = value.values()
    if not isinstance(text, str):
        raise TypeError(f"expected text, got {type(text).__name__}")
    return text


def _code_with_scope(value: Mapping[str, Any], path: str) -> dict[str, Any]:
    return {"code": _text({"$code": value["$code"]}, path), "scope": unwrap(value["$scope"], f"{path}.$scope")}


def _db_pointer(value: Mapping[str, Any], path: str) -> dict[str, Any]:
    pointer = value["$dbPointer"]
    if not isinstance(pointer, Mapping):
        raise TypeError("expected an object of $ref and $id")
    return {"$ref": pointer["$ref"], "$id": unwrap(pointer["$id"], f"{path}.$id")}


def _describe(value: Any) -> str:
    return json_text.shorten(json_text.dumps(value))


_WRAPPERS: dict[frozenset[str], Callable[[Mapping[str, Any], str], Any]] = {
    frozenset({"$oid"}): _oid,
    frozenset({"$numberInt"}): _integer,
    frozenset({"$numberLong"}): _integer,
    frozenset({"$numberDouble"}): _double,
    frozenset({"$numberDecimal"}): _decimal,
    frozenset({"$date"}): _date,
    frozenset({"$timestamp"}): _timestamp,
    frozenset({"$binary"}): _binary,
    frozenset({"$binary", "$type"}): _binary,
    frozenset({"$uuid"}): _uuid,
    frozenset({"$regularExpression"}): _regular_expression,
    frozenset({"$regex", "$options"}): _regular_expression,
    frozenset({"$symbol"}): _text,
    frozenset({"$code"}): _text,
    frozenset({"$code", "$scope"}): _code_with_scope,
    frozenset({"$dbPointer"}): _db_pointer,
    frozenset({"$minKey"}): lambda _value, _path: "MinKey",
    frozenset({"$maxKey"}): lambda _value, _path: "MaxKey",
    frozenset({"$undefined"}): lambda _value, _path: None,
}
