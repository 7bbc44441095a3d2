"""Spark types of a source table's columns, from each kind of schema information a change
event can carry (pure functions: `cdc-dbt scaffold` uses them, and they are tested alone).

1. The Debezium JsonConverter schema of the row (`debezium_type`);
2. the Qlik Replicate metadata message's `tableColumns` (`qlik_type`);
3. the JSON values seen in the rows (`seen_value`, `merge_seen`, `seen_type`), MongoDB's Extended
   JSON wrappers included: `{"$numberLong": "7"}` says more than the unwrapped `7`.

A typed mart casts the text the parsing core writes into the row JSON (`try_cast`, or
`from_json` for nested types), so each mapping names the type whose cast from that text is right:
see `udfs.logical_types` for how each logical type is written.

4. Keeping a mart up to date (`cdc-dbt scaffold --check` / `--update`): whether a declared type
   holds what landed, and the type that holds both when it does not (`widen`, `widen_for_seen`):
   the widening rules, in one place.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from udfs import extended_json, qlik
from udfs.logical_types import struct_field_schemas
from udfs.reasons import RecordError

MAX_DECIMAL_PRECISION = 38
"""Spark's widest decimal. A wider source decimal is declared `string`: its exact text is kept,
where `decimal(38, s)` would turn every value beyond 38 digits into null."""


@dataclass(frozen=True)
class ColumnType:
    """A Spark type and where it came from (said in the column's description)."""

    data_type: str
    origin: str
    compare_as: str | None = None
    """What the landed values are, when `data_type` says less: `decimal(50,2)` for a source decimal
    wider than Spark's (written `string`). `--check` compares a declared type with this."""
    stand_in: bool = False
    """`string` standing in for a type Spark has not (times of day, JSON, UUIDs, bytes, a decimal
    of no fixed scale): any type the user declared on review holds it, for `--check`."""

    @property
    def landed_type(self) -> str:
        return self.compare_as or self.data_type


# --- 1. The Debezium JsonConverter schema ---------------------------------------------------

_DEBEZIUM_PRIMITIVES = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "bigint",
    "float": "float",
    "float32": "float",
    "double": "double",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    # The row JSON keeps bytes as the converter's base64 text: a cast of that text to binary
    # would give the bytes of the text, not the decoded ones.
    "bytes": "string",
}
"""Kafka Connect schema types as JsonConverter names them (`double` for FLOAT64, ...)."""

_DEBEZIUM_LOGICAL_TYPES = {
    # Dates are written `YYYY-MM-DD` (udfs.logical_types).
    "io.debezium.time.Date": "date",
    "org.apache.kafka.connect.data.Date": "date",
    # Zone-less timestamps are written `YYYY-MM-DDTHH:MM:SS.ffffff`: the session time zone is
    # UTC, so the cast reads them as the UTC instants the connector means.
    "io.debezium.time.Timestamp": "timestamp",
    "io.debezium.time.MicroTimestamp": "timestamp",
    "io.debezium.time.NanoTimestamp": "timestamp",
    "org.apache.kafka.connect.data.Timestamp": "timestamp",
    # An ISO-8601 text with its offset (`2024-03-04T08:00:00+01:00`): Spark's `timestamp` is an
    # instant and its cast honours the offset, where `timestamp_ntz` would drop it.
    "io.debezium.time.ZonedTimestamp": "timestamp",
    # Times of day stay text (`HH:MM:SS.ffffff`): Spark has no time type by default.
    "io.debezium.time.Time": "string",
    "io.debezium.time.MicroTime": "string",
    "io.debezium.time.NanoTime": "string",
    "io.debezium.time.ZonedTime": "string",
    "org.apache.kafka.connect.data.Time": "string",
    "io.debezium.time.Year": "int",
    "io.debezium.time.MicroDuration": "bigint",
    "io.debezium.time.NanoDuration": "bigint",
    "io.debezium.time.Interval": "string",
    # PostgreSQL `numeric` without a declared precision: each value has its own scale and up to
    # 131072 digits. No Spark decimal holds them all (decimal(38,10) rounded 1e-20 to 0 and made a
    # 42-digit value null, found against a real PostgreSQL): the exact decimal text, to cast in SQL
    # where a fixed decimal is known to fit; the description asks for a review.
    "io.debezium.data.VariableScaleDecimal": "string",
    "io.debezium.data.Json": "string",
    "io.debezium.data.Uuid": "string",
    "io.debezium.data.Enum": "string",
    "io.debezium.data.EnumSet": "string",
    "io.debezium.data.Xml": "string",
    "io.debezium.data.Bits": "string",
    "io.debezium.data.Ltree": "string",
}
"""Logical types by schema `name`: the row JSON holds them as `udfs.logical_types` writes them."""

DECIMAL = "org.apache.kafka.connect.data.Decimal"


def debezium_type(schema: Mapping[str, Any]) -> ColumnType | None:
    """The Spark type of a field by its JsonConverter schema; None when the schema says nothing
    usable (the next source of types decides)."""
    data_type = _debezium_spark_type(schema)
    if data_type is None:
        return None
    origin = f"{_debezium_type_words(schema)} in the Debezium schema"
    name, kind = schema.get("name"), schema.get("type")
    if name == DECIMAL and data_type == "string":
        parameters = schema.get("parameters")
        parameters = parameters if isinstance(parameters, Mapping) else {}
        wide = _wide_decimal(_int_text(parameters.get("connect.decimal.precision")), _int_text(parameters.get("scale")))
        return ColumnType(data_type, origin, compare_as=wide, stand_in=wide is None)
    plain_text = kind == "string" and not name
    return ColumnType(data_type, origin, stand_in=data_type == "string" and not plain_text)


def _debezium_spark_type(schema: Mapping[str, Any]) -> str | None:
    name, kind = schema.get("name"), schema.get("type")
    if name == DECIMAL:
        parameters = schema.get("parameters")
        parameters = parameters if isinstance(parameters, Mapping) else {}
        scale = _int_text(parameters.get("scale"))
        precision = _int_text(parameters.get("connect.decimal.precision"))
        return decimal_type(precision, scale if scale is not None else 0)
    if isinstance(name, str) and name in _DEBEZIUM_LOGICAL_TYPES:
        return _DEBEZIUM_LOGICAL_TYPES[name]
    if not isinstance(kind, str):
        return None
    if kind in _DEBEZIUM_PRIMITIVES:
        return _DEBEZIUM_PRIMITIVES[kind]
    if kind == "array":
        items = schema.get("items")
        item_type = _debezium_spark_type(items) if isinstance(items, Mapping) else None
        return f"array<{item_type or 'string'}>"
    if kind == "map":
        # A JSON object's keys are text, whatever the map's key schema.
        values = schema.get("values")
        value_type = _debezium_spark_type(values) if isinstance(values, Mapping) else None
        return f"map<string,{value_type or 'string'}>"
    if kind == "struct":
        fields = struct_field_schemas(schema)
        if not fields:
            return None
        members = (f"{struct_field_name(n)}:{_debezium_spark_type(s) or 'string'}" for n, s in fields.items())
        return f"struct<{','.join(members)}>"
    return None


def _debezium_type_words(schema: Mapping[str, Any]) -> str:
    name, kind = schema.get("name"), schema.get("type")
    if name == DECIMAL:
        parameters = schema.get("parameters")
        parameters = parameters if isinstance(parameters, Mapping) else {}
        precision = parameters.get("connect.decimal.precision")
        scale = parameters.get("scale", 0)
        return f"{name} with {f'precision {precision} and ' if precision is not None else ''}scale {scale}"
    if name == "io.debezium.data.VariableScaleDecimal":
        return f"{name}: no declared precision or scale, review"
    if isinstance(name, str) and name:
        return name
    return str(kind)


def decimal_type(precision: int | None, scale: int) -> str:
    """`decimal(p,s)` for a source decimal; no precision → 38 digits; beyond Spark's 38 → `string`.

    A scale above the precision (Oracle's NUMBER(2,5)) widens the precision to the scale: Spark
    requires s ≤ p and the values still fit.
    """
    if scale < 0 or scale > MAX_DECIMAL_PRECISION:
        return "string"
    if precision is None or precision <= 0:
        precision = MAX_DECIMAL_PRECISION
    if precision > MAX_DECIMAL_PRECISION:
        return "string"
    return f"decimal({max(precision, scale)},{scale})"


def _int_text(value: Any) -> int | None:
    """An integer the converter may write as a number or as text (`"scale": "2"`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


# --- 2. The Qlik Replicate metadata message -------------------------------------------------

_QLIK_TYPES = {
    "INT1": "int",
    "INT2": "int",
    "INT4": "int",
    "INT8": "bigint",
    "UINT1": "int",
    "UINT2": "int",
    "UINT4": "bigint",
    "UINT8": "decimal(20,0)",
    "REAL4": "float",
    "REAL8": "double",
    "BOOLEAN": "boolean",
    "STRING": "string",
    "WSTRING": "string",
    "CLOB": "string",
    "NCLOB": "string",
    # Binary values reach the row JSON as the text Qlik wrote: kept as that text.
    "BYTES": "string",
    "BLOB": "string",
    "DATE": "date",
    "TIME": "string",
    # `YYYY-MM-DD HH:MM:SS.ffffff`, UTC like the session: the cast reads the instant Qlik means.
    "DATETIME": "timestamp",
}
"""Qlik Replicate data types (`tableColumns.<column>.type`); NUMERIC goes by its precision and
scale (`decimal_type`)."""


def qlik_type(column: qlik.QlikColumn) -> ColumnType | None:
    """The Spark type of a Qlik column by its metadata; None for a type not known here."""
    kind = (column.type or "").upper()
    if kind == "NUMERIC":
        data_type = decimal_type(column.precision, column.scale or 0)
        words = f"NUMERIC({column.precision or 0},{column.scale or 0})"
    elif kind in _QLIK_TYPES:
        data_type = _QLIK_TYPES[kind]
        words = f"{kind}({column.length})" if column.length and kind in ("STRING", "WSTRING", "BYTES") else kind
    else:
        return None
    if kind == "NUMERIC" and data_type == "string":
        wide = _wide_decimal(column.precision, column.scale or 0)
        return ColumnType(data_type, f"Qlik {words}", compare_as=wide, stand_in=wide is None)
    return ColumnType(data_type, f"Qlik {words}", stand_in=data_type == "string" and kind not in _QLIK_TEXT)


_QLIK_TEXT = ("STRING", "WSTRING", "CLOB", "NCLOB")
"""Qlik types that are text at the source (the others written `string` stand in for a type)."""


def _wide_decimal(precision: int | None, scale: int | None) -> str | None:
    """`decimal(p,s)` beyond Spark's 38 digits, for comparing (`ColumnType.compare_as`); None when
    the source says no usable precision and scale."""
    scale = scale or 0
    if precision is None or precision <= MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
        return None
    return f"decimal({precision},{scale})"


# --- 3. The JSON types seen in the rows -----------------------------------------------------

NULL, BOOLEAN, INT, BIGINT, DECIMAL_SEEN, DOUBLE, STRING, TIMESTAMP, STRUCT, ARRAY = (
    "null", "boolean", "int", "bigint", "decimal", "double", "string", "timestamp", "struct", "array",
)  # fmt: skip
_NUMERIC_RANK = {INT: 0, BIGINT: 1, DECIMAL_SEEN: 2, DOUBLE: 3}
_BIGINT_RANGE = range(-(2**63), 2**63)
_INT_RANGE = range(-(2**31), 2**31)


@dataclass(frozen=True)
class Seen:
    """What the values of one field looked like, merged over every row: a small type lattice
    (int < bigint < decimal < double, anything else mixed is a string)."""

    kind: str = NULL
    fields: tuple[tuple[str, "Seen"], ...] = ()
    """A struct's fields in the order first seen."""
    item: "Seen | None" = None
    """An array's elements."""
    integer_digits: int = 0
    scale: int = 0
    int32: bool = False
    """Every integer seen fits 32 bits. Plain integers alone still make a `bigint` (a writer may
    leave a 64-bit integer unwrapped); beside a `$numberInt` they make an `int`."""
    notes: frozenset[str] = frozenset()
    """What was seen, in words for the description: `integers`, `$numberLong`, ..."""


def seen_value(value: Any, *, extended: bool = False) -> Seen:
    """What one JSON value is. `extended`: a raw MongoDB document, whose Extended JSON wrappers
    (`{"$numberLong": "7"}`) say the BSON type the unwrapped value no longer shows."""
    if value is None:
        return Seen()
    if isinstance(value, bool):
        return Seen(BOOLEAN, notes=frozenset({"booleans"}))
    if isinstance(value, int):
        if value in _BIGINT_RANGE:
            digits = len(str(abs(value)))
            return Seen(BIGINT, integer_digits=digits, int32=value in _INT_RANGE, notes=frozenset({"integers"}))
        return Seen(DECIMAL_SEEN, integer_digits=len(str(abs(value))), notes=frozenset({"integers"}))
    if isinstance(value, float):
        return Seen(DOUBLE, notes=frozenset({"numbers with a fraction"}))
    if isinstance(value, str):
        return Seen(STRING, notes=frozenset({"strings"}))
    if isinstance(value, list):
        item = Seen()
        for element in value:
            item = merge_seen(item, seen_value(element, extended=extended))
        return Seen(ARRAY, item=item, notes=frozenset({"arrays"}))
    if isinstance(value, Mapping):
        if extended and value and all(isinstance(name, str) and name.startswith("$") for name in value):
            return _seen_wrapper(value)
        fields = tuple((str(name), seen_value(item, extended=extended)) for name, item in value.items())
        return Seen(STRUCT, fields=fields, notes=frozenset({"objects"}))
    return Seen(STRING, notes=frozenset({"strings"}))


def _seen_wrapper(wrapper: Mapping[str, Any]) -> Seen:
    names = frozenset(wrapper)
    note = frozenset({"/".join(sorted(names))})
    if names == {"$numberInt"}:
        return Seen(INT, integer_digits=10, int32=True, notes=note)
    if names == {"$numberLong"}:
        return Seen(BIGINT, integer_digits=19, notes=note)
    if names == {"$numberDouble"}:
        return Seen(DOUBLE, notes=note)
    if names == {"$date"}:
        # Unwrapped to ISO-8601 in UTC (`...T02:35:58.652Z`).
        return Seen(TIMESTAMP, notes=note)
    if names == {"$numberDecimal"}:
        return _seen_decimal_text(wrapper["$numberDecimal"], note)
    if names == {"$timestamp"}:
        return Seen(STRUCT, fields=(("t", Seen(BIGINT)), ("i", Seen(BIGINT))), notes=note)
    try:
        plain = extended_json.unwrap(wrapper)
    except RecordError:
        return Seen(STRING, notes=note)
    return replace(seen_value(plain), notes=note)


def _seen_decimal_text(text: Any, note: frozenset[str]) -> Seen:
    """`$numberDecimal` is unwrapped to its exact text: a decimal with the digits it shows."""
    try:
        number = Decimal(str(text))
    except InvalidOperation:
        return Seen(STRING, notes=note)
    if not number.is_finite():
        return Seen(STRING, notes=note)
    _, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)  # finite
    scale = max(0, -exponent)
    return Seen(DECIMAL_SEEN, integer_digits=max(len(digits) + exponent, 1), scale=scale, notes=note)


def merge_seen(first: Seen, second: Seen) -> Seen:
    """The type that holds the values of both."""
    notes = first.notes | second.notes
    if first.kind == NULL:
        return replace(second, notes=notes)
    if second.kind == NULL:
        return replace(first, notes=notes)
    if first.kind == second.kind == STRUCT:
        merged = dict(first.fields)
        for name, seen in second.fields:
            merged[name] = merge_seen(merged[name], seen) if name in merged else seen
        return Seen(STRUCT, fields=tuple(merged.items()), notes=notes)
    if first.kind == second.kind == ARRAY:
        return Seen(ARRAY, item=merge_seen(first.item or Seen(), second.item or Seen()), notes=notes)
    if first.kind in _NUMERIC_RANK and second.kind in _NUMERIC_RANK:
        kind = max(first.kind, second.kind, key=_NUMERIC_RANK.__getitem__)
        int32 = first.int32 and second.int32
        if kind == BIGINT and int32 and INT in (first.kind, second.kind):
            kind = INT
        return Seen(
            kind,
            integer_digits=max(first.integer_digits, second.integer_digits),
            scale=max(first.scale, second.scale),
            int32=int32,
            notes=notes,
        )
    if first.kind == second.kind:
        return replace(first, notes=notes)
    return Seen(STRING, notes=notes)


def seen_type(seen: Seen) -> ColumnType:
    """The Spark type of the values seen, with what was seen in words."""
    if not seen.notes:
        return ColumnType("string", "only nulls seen in the rows")
    words = ", ".join(sorted(seen.notes))
    mixed = "mixed " if seen.kind == STRING and len(seen.notes) > 1 else ""
    return ColumnType(seen_spark_type(seen), f"{mixed}{words} seen in the rows")


def seen_spark_type(seen: Seen) -> str:
    if seen.kind == NULL:
        return "string"
    if seen.kind == DECIMAL_SEEN:
        # Precision from the digits seen would fit today's values only: 38, and the scale seen.
        if seen.integer_digits + seen.scale > MAX_DECIMAL_PRECISION:
            return "string"
        return f"decimal({MAX_DECIMAL_PRECISION},{seen.scale})"
    if seen.kind == STRUCT:
        if not seen.fields:
            return "string"
        members = (f"{struct_field_name(name)}:{seen_spark_type(item)}" for name, item in seen.fields)
        return f"struct<{','.join(members)}>"
    if seen.kind == ARRAY:
        return f"array<{seen_spark_type(seen.item or Seen())}>"
    return seen.kind


def struct_field_name(name: str) -> str:
    """A field name inside a nested type: bare when it is an identifier, else in backticks."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "`" + name.replace("`", "``") + "`"


# --- 4. Widening: a declared type and what landed --------------------------------------------
#
# `cdc-dbt scaffold --check` asks whether a mart's declared type holds every value that landed;
# `--update` replaces it with the narrowest type holding both, when that is a clean widening:
# every value the declared type held reads the same in the wider one, as in Delta Lake's type
# widening. The rules (docs/output-tables.md#keeping-a-typed-mart-up-to-date):
#
# - tinyint < smallint < int < bigint;
# - an integer type and decimal(p,s): decimal(max(p-s, d) + s, s), d the integer type's digits
#   (3, 5, 10, 19); two decimals: decimal(max(p-s, p'-s') + max(s, s'), max(s, s')); beyond 38
#   digits no Spark decimal holds both: not clean (`string` would, when asked);
# - float < double; tinyint and smallint fit a float, int a double exactly (bigint and decimals
#   do not: not clean);
# - date < timestamp (a date reads as its midnight, UTC); date < timestamp_ntz;
# - array<a> and array<b>: array<widen(a, b)>; map values likewise; struct<...>: each member
#   widened, members that landed and are not declared added (a nested field is a new column);
# - string holds every value: the row JSON's text of it;
# - anything else (int and string, boolean and int, bigint and double) is not a widening: said,
#   and left to the user; `string` only when asked (`to_string`).
#
# Nothing ever narrows: a declared type wider than what landed is kept.

_INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}
_INTEGERS = tuple(_INTEGER_DIGITS)
_FLOAT_HOLDS = {"float": ("tinyint", "smallint", "float"), "double": ("tinyint", "smallint", "int", "float", "double")}
_ALIASES = {
    "byte": "tinyint",
    "short": "smallint",
    "integer": "int",
    "long": "bigint",
    "real": "float",
    "dec": "decimal",
    "numeric": "decimal",
    "bool": "boolean",
}
_SIMPLE = frozenset(
    {*_INTEGERS, "float", "double", "boolean", "string", "date", "timestamp", "timestamp_ntz", "binary"}
)


@dataclass(frozen=True)
class SparkType:
    """A Spark type as a mart's YAML declares it (`decimal(12,2)`, `struct<a:int,b:array<string>>`)."""

    name: str
    """`int`, `decimal`, `array`, `map`, `struct`, ...; a type not known here keeps its text (`varchar(10)`)."""
    precision: int = 0
    scale: int = 0
    items: tuple["SparkType", ...] = ()
    """An array's element type; a map's key and value types."""
    fields: tuple[tuple[str, "SparkType"], ...] = ()
    """A struct's members, in order."""

    @property
    def known(self) -> bool:
        return self.name in _SIMPLE or self.name in ("decimal", "array", "map", "struct")

    def __str__(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if self.name == "array":
            return f"array<{self.items[0]}>"
        if self.name == "map":
            return f"map<{self.items[0]},{self.items[1]}>"
        if self.name == "struct":
            return "struct<" + ",".join(f"{struct_field_name(n)}:{t}" for n, t in self.fields) + ">"
        return self.name


def parse_type(text: str) -> SparkType | None:
    """A declared type, as Spark's DDL writes it (any case, spaces allowed); None when it is not one."""
    parser = _TypeParser(text)
    try:
        parsed = parser.type()
        parser.skip_spaces()
    except ValueError:
        return None
    return parsed if parser.at_end() else None


class _TypeParser:
    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def at_end(self) -> bool:
        return self.at == len(self.text)

    def skip_spaces(self) -> None:
        while not self.at_end() and self.text[self.at].isspace():
            self.at += 1

    def expect(self, character: str) -> None:
        self.skip_spaces()
        if self.text[self.at : self.at + 1] != character:
            raise ValueError(f"{character!r} expected at {self.at}")
        self.at += 1

    def peek(self) -> str:
        self.skip_spaces()
        return self.text[self.at : self.at + 1]

    def word(self) -> str:
        self.skip_spaces()
        match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.text, self.at)
        if match is None:
            raise ValueError(f"a name expected at {self.at}")
        self.at = match.end()
        return match.group()

    def field_name(self) -> str:
        if self.peek() != "`":
            return self.word()
        self.at += 1
        name = []
        while True:
            end = self.text.find("`", self.at)
            if end < 0:
                raise ValueError("an unclosed `")
            name.append(self.text[self.at : end])
            self.at = end + 1
            if self.text[self.at : self.at + 1] != "`":
                return "`".join(name)
            self.at += 1

    def type(self) -> SparkType:
        name = self.word().lower()
        name = _ALIASES.get(name, name)
        if name in ("array", "map", "struct"):
            self.expect("<")
            if name == "array":
                items: tuple[SparkType, ...] = (self.type(),)
                self.expect(">")
                return SparkType("array", items=items)
            if name == "map":
                key = self.type()
                self.expect(",")
                value = self.type()
                self.expect(">")
                return SparkType("map", items=(key, value))
            fields: list[tuple[str, SparkType]] = []
            while self.peek() != ">":
                if fields:
                    self.expect(",")
                member = self.field_name()
                if self.peek() == ":":
                    self.at += 1
                fields.append((member, self.type()))
            self.expect(">")
            return SparkType("struct", fields=tuple(fields))
        if self.peek() != "(":
            return SparkType(name)
        start = self.at
        self.expect("(")
        numbers = [self.number()]
        while self.peek() == ",":
            self.at += 1
            numbers.append(self.number())
        self.expect(")")
        if name == "decimal" and len(numbers) <= 2:
            return SparkType("decimal", numbers[0], numbers[1] if len(numbers) == 2 else 0)
        return SparkType(name + re.sub(r"\s+", "", self.text[start : self.at]))

    def number(self) -> int:
        self.skip_spaces()
        match = re.compile(r"[0-9]+").match(self.text, self.at)
        if match is None:
            raise ValueError(f"a number expected at {self.at}")
        self.at = match.end()
        return int(match.group())


def _decimal(text: SparkType) -> SparkType:
    """`decimal` without its precision is Spark's decimal(10,0)."""
    return SparkType("decimal", 10, 0) if text.name == "decimal" and text.precision == 0 else text


@dataclass(frozen=True)
class Widening:
    """What a declared type becomes for what landed: itself when it holds it already, else the
    narrowest type holding both; `why`, when there is no clean widening (the type is then kept)."""

    data_type: str
    why: str | None = None

    @property
    def clean(self) -> bool:
        return self.why is None


def widen(declared: str, landed: str, *, to_string: bool = False) -> Widening:
    """The type holding every value of `declared` and of `landed` (the rules above). A declared type
    not known here (`varchar(10)`) is the user's: kept, as holding what landed."""
    mine, theirs = parse_type(declared), parse_type(landed)
    if mine is None or theirs is None or not mine.known or not theirs.known:
        return Widening(declared)
    wider, why = _widen(mine, theirs)
    if wider is None:
        if to_string:
            return Widening("string")
        return Widening(declared, why)
    return Widening(declared if wider == _decimal(mine) else str(wider))


def _widen(mine: SparkType, theirs: SparkType) -> tuple[SparkType | None, str]:
    """The narrowest type holding both, or None and why there is none."""
    mine, theirs = _decimal(mine), _decimal(theirs)
    if mine == theirs or mine.name == "string":
        return mine, ""
    names = (mine.name, theirs.name)
    not_clean = f"{mine} cannot hold {theirs}: not a widening"
    if mine.name in _INTEGERS and theirs.name in _INTEGERS:
        return max(mine, theirs, key=lambda t: _INTEGER_DIGITS[t.name]), ""
    if {*names} <= {*_INTEGERS, "decimal"}:
        integer_digits = max(_integer_digits(mine), _integer_digits(theirs))
        scale = max(mine.scale, theirs.scale)
        if integer_digits + scale > MAX_DECIMAL_PRECISION:
            return None, f"{mine} and {theirs} need decimal({integer_digits + scale},{scale}), beyond Spark's 38 digits"
        return SparkType("decimal", integer_digits + scale, scale), ""
    for wide, narrow in (names, names[::-1]):
        if wide in _FLOAT_HOLDS and narrow in _FLOAT_HOLDS["double"]:
            if narrow in _FLOAT_HOLDS[wide]:
                return SparkType(wide), ""
            if narrow in _FLOAT_HOLDS["double"]:
                return SparkType("double"), ""
        if narrow == "date" and wide in ("timestamp", "timestamp_ntz"):
            return SparkType(wide), ""
    if names == ("array", "array"):
        item, why = _widen(mine.items[0], theirs.items[0])
        return (SparkType("array", items=(item,)) if item else None), why
    if names == ("map", "map") and mine.items[0] == theirs.items[0]:
        value, why = _widen(mine.items[1], theirs.items[1])
        return (SparkType("map", items=(mine.items[0], value)) if value else None), why
    if names == ("struct", "struct"):
        members = dict(mine.fields)
        for name, member in theirs.fields:
            wider, why = _widen(members[name], member) if name in members else (member, "")
            if wider is None:
                return None, f"member {struct_field_name(name)}: {why}"
            members[name] = wider
        return SparkType("struct", fields=tuple(members.items())), ""
    return None, not_clean


def _integer_digits(spark_type: SparkType) -> int:
    if spark_type.name == "decimal":
        return spark_type.precision - spark_type.scale
    return _INTEGER_DIGITS[spark_type.name]


def widen_for_seen(declared: str, seen: Seen, *, to_string: bool = False) -> Widening:
    """`widen` for the JSON values seen in the rows (a table without a schema), by what the values
    say: an int holds integers that all fit 32 bits, a decimal(p,s) integers of up to p-s digits,
    and a declared type is kept where the values cannot tell (text only, which a type chosen on
    review may read; numbers with a fraction, whose digits a decimal may hold)."""
    mine = parse_type(declared)
    if mine is None or not mine.known:
        return Widening(declared)
    landed = _seen_landed(_decimal(mine), seen)
    if landed is None:
        return Widening(declared)
    return widen(declared, str(landed), to_string=to_string)


def _seen_landed(mine: SparkType, seen: Seen) -> SparkType | None:
    """The type the values seen need, as far as they tell, for comparing with `mine`; None when
    they cannot tell or `mine` holds them."""
    if seen.kind == NULL or mine.name == "string":
        return None
    if seen.kind == STRING and seen.notes <= {"strings"}:
        return None
    if seen.kind in (INT, BIGINT, DECIMAL_SEEN):
        if mine.name == "decimal":
            integer_digits = max(mine.precision - mine.scale, seen.integer_digits)
            scale = max(mine.scale, seen.scale)
            return SparkType("decimal", integer_digits + scale, scale)
        if seen.kind != DECIMAL_SEEN:
            return SparkType("int" if seen.int32 else "bigint")
    if seen.kind == DOUBLE and mine.name == "decimal":
        return None
    if seen.kind == STRUCT and mine.name == "struct":
        declared = dict(mine.fields)
        members = []
        for name, member in seen.fields:
            if name not in declared:
                members.append((name, parse_type(seen_spark_type(member)) or SparkType("string")))
            else:
                members.append((name, _seen_landed(declared[name], member) or declared[name]))
        return SparkType("struct", fields=tuple(members))
    if seen.kind == STRUCT and mine.name == "map":
        values = [_seen_landed(mine.items[1], member) or mine.items[1] for _, member in seen.fields]
        value = mine.items[1]
        for other in values:
            value = _widen(value, other)[0] or other
        return SparkType("map", items=(mine.items[0], value))
    if seen.kind == ARRAY and mine.name == "array":
        item = _seen_landed(mine.items[0], seen.item or Seen())
        return SparkType("array", items=(item or mine.items[0],))
    return parse_type(seen_spark_type(seen))
