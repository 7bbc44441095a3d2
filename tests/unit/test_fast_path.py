"""The fast paths give what the general path gives, byte for byte, or nothing.

`parse_kcat_line` and `parse_record` first try a fast path for the common line and record
(`udfs.landing.parse_common_kcat_line`, `udfs.fast_path.parse_common_record`), which returns None
for anything else; the general path (`parse_kcat_line_generally`, `parse_record_generally`) is the
one definition of the rules. Here both run on every input: the hostile corpus, the shared corpus,
a generated stream, and seeded mutations of the stream's lines, messages and keys (each change one
a fast path could get wrong: a field dropped or of another type, an op, connector, position or
marker field changed, a number orjson rounds, a schema block changed, a text cut or given a
repeated member). Wherever a fast path answers, its result must be the general path's: the same
`repr`, so the same types, values and field order.

A fast path that never answered would pass as well: each test also counts how often it answered.
"""

import base64
import copy
import gzip
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from generator import generate, write_other_sources
from tests.corpus import corpus_dir
from udfs.fast_path import _common_decoder, parse_common_record
from udfs.landing import LandedRecord, parse_common_kcat_line, parse_kcat_line, parse_kcat_line_generally
from udfs.logical_types import UNAVAILABLE_BYTES, decode_value
from udfs.reasons import RecordError
from udfs.records import parse_record, parse_record_generally

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"
SEED = 33
MUTANTS_PER_LINE = 4
"""Mutations of each generated line (three of its message, one of its kcat line)."""

Record = tuple[str | None, str | None, int, int, str | None]
"""`parse_record`'s arguments: key, payload, partition, offset, topic."""


@dataclass
class Tally:
    """How many inputs each fast path was given, and how many it answered."""

    lines: int = 0
    lines_fast: int = 0
    records: int = 0
    records_fast: int = 0


def check_line(line: str, tally: Tally) -> None:
    """The line's fast landing (when there is one) is the general one; its record is checked."""
    general = parse_kcat_line_generally(line)
    fast = parse_common_kcat_line(line)
    tally.lines += 1
    if fast is not None:
        tally.lines_fast += 1
        assert repr(fast) == repr(general), f"line {line!r:.300}"
    assert repr(parse_kcat_line(line)) == repr(general)
    if general.reason is None:
        check_record(record_of(general), tally)


def check_record(record: Record, tally: Tally) -> None:
    key, payload, partition, offset, topic = record
    general = parse_record_generally(key, payload, partition, offset, topic)
    fast = parse_common_record(key, payload, partition, offset)
    tally.records += 1
    if fast is not None:
        tally.records_fast += 1
        assert repr(fast) == repr(general), f"key {key!r:.200}, payload {payload!r:.600}"
    assert repr(parse_record(key, payload, partition, offset, topic)) == repr(general)


def record_of(landed: LandedRecord) -> Record:
    assert landed.partition is not None and landed.offset is not None
    return landed.key, landed.payload, landed.partition, landed.offset, landed.topic


# --- the inputs -------------------------------------------------------------------------------


def hostile_lines() -> list[str]:
    """Every line of the hostile corpus that is text (the others never reach Python)."""
    lines = []
    for path in sorted(HOSTILE.iterdir()):
        if path.name.endswith((".jsonl", ".jsonl.gz")):
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            for raw in re.split(rb"\r\n|\r|\n", data):
                try:
                    lines.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    continue
    return lines


@cache
def generated_lines() -> list[str]:
    """A generated PostgreSQL stream (the converter's schema on every message) and the demo's Qlik
    and MongoDB streams, as kcat lines: part files in their order, then their partitions'."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cdc-fast-path-") as scratch:
        folder = Path(scratch)
        generate(folder, events=1_500, keys=150, seed=SEED)
        write_other_sources(folder, seed=SEED)
        return [line for path in sorted(folder.rglob("*.json")) for line in path.read_text().splitlines()]


def corpus_messages() -> Iterator[str]:
    """Every JSON value of the shared corpus: each line that is one, and each file that is one."""
    for path in sorted(corpus_dir().rglob("*")):
        if not path.is_file() or path.suffix in (".md",):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for line in [text, *text.splitlines()]:
            try:
                json.loads(line)
            except ValueError:
                continue
            yield line.strip()


KEYS = [
    None,
    '{"id":1001}',
    '{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,'
    '"name":"dbserver1.inventory.customers.Key"},"payload":{"id":1001}}',
    '{"id":"a"}',
    "{}",
    '"text"',
    "1001",
    '{"id":1.5}',
    '{"id":123456789012345678901234}',
    '{"b":123456789012345678901234,"a":1}',
    '{"b":0.1000000000000000055511151231257827,"a":1}',
    '{"_id":"{\\"$oid\\": \\"5d505646cf6d4fe581014ab2\\"}"}',
]
"""Keys given to every corpus message: what keys look like, and what they should not."""


# --- mutations --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text written as is: a number orjson rounds, or reads as a float, or refuses."""

    text: str


DEEP = Raw("[" * 1000 + '"123456789012345678901"' + "]" * 1000)
"""Nested as deep as orjson reads, and beyond what `json` does, with a long number's digits in a
string: `json_text.loads` reads it again with `json`, which refuses it as too deep."""
NESTED_50, NESTED_150 = (Raw("[" * depth + '"123456789012345678901"' + "]" * depth) for depth in (50, 150))
"""Nested as `json` reads it, each side of the openings a fast path takes (`_MAX_OPENINGS`), with a
long number's digits that have `json_text.loads` read the whole text again."""

HOSTILE_VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 1.5, -0.0, 21.148, "", "x", "0",
    "12", "false", "true", "first", "2024-01-01", [], {}, [1], ["a", "b"], {"a": 1}, {"a": {"b": 1}}, [[1]],
    [{"a": [1]}], "__debezium_unavailable_value", "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==",
    Raw("1.00000000000000000001"), Raw("123456789012345678901234"), Raw("0.1000000000000000055511151231257827"),
    Raw("1e-400"), Raw("4.9e-324"), Raw("1E2"), Raw("-0"), Raw("NaN"), Raw('"\\ud800"'),
    {"a": [Raw("123456789012345678901234")]}, [[Raw("0.1000000000000000055511151231257827")]], [[1.5]], DEEP,
]  # fmt: skip
"""Values put anywhere in a message: each of another JSON type, at a bound, or read inexactly."""

FIELD_VALUES: dict[str, list[Any]] = {
    "op": ["c", "r", "u", "d", "t", "m", "x", "", "C"],
    "connector": ["postgresql", "mysql", "mongodb", "oracle", "sqlserver", "db2", "", "PostgreSQL"],
    "sequence": [
        '[null,"85750000"]', '["1","2"]', '[null,null]', '["01","002"]', '["01","2"]', '["1","02"]', '["0","5"]',
        '["10","0"]', '["1","2","3"]', '["1"]', "[1,2]", '[ "1","2"]', '["\\u0663","1"]', '["1",2]', "[", "x",
        '["' + "9" * 99 + '","1"]', '["' + "9" * 100 + '","1"]',
    ],
    "lsn": [0, 85750000, "85750000", "0x10", 2**63, -5, 10**99],
    "snapshot": ["true", "false", "last", "incremental", True, False, "TRUE"],
    "db": ["inventory_db", "", None, 5, 1.5, True, ["a"], {"a": 1}],
    "txId": [501, "501", None, 2**63, 1.5, Raw("123456789012345678901234"), {"a": 1.5}],
    "table": ["customers", "", "a.b", 5],
    "schema": ["inventory", "", None, 5],
    "collection": ["reviews", "", None],
    "status": ["BEGIN", "END", "begin", "COMMIT"],
    "id": ["510:85753954", "", 510, True, None],
    "event_count": [0, 3, -1, 2**63, "3", None],
    "data_collections": [
        None, [], [{"data_collection": "inventory.customers", "event_count": 2}],
        [{"data_collection": "a", "event_count": 1}, {"data_collection": "a", "event_count": 1}],
        [{"data_collection": 5, "event_count": 1}], [1],
    ],
    "scale": ["2", 2, "0", "-3", 0, "x", None, 2.5, True, "16384", 16383, "\N{FULLWIDTH DIGIT ONE}"],
    "parameters": [None, {}, [], "x", {"scale": "2"}, {"scale": None}, {"connect.decimal.precision": "10"}],
    "name": ["io.debezium.time.Date", "org.apache.kafka.connect.data.Date", "io.debezium.time.Timestamp",
             "org.apache.kafka.connect.data.Timestamp", "io.debezium.time.MicroTimestamp",
             "io.debezium.time.NanoTimestamp", "org.apache.kafka.connect.data.Decimal",
             "inventory.customers.Value", "io.debezium.data.VariableScaleDecimal", None],
    "type": ["struct", "int32", "string", "array", "map", "bytes"],
    "field": ["before", "after", "id", "", 5],
    "x": [[[1]], [{"a": [1]}], {"a": {"b": 1}}, [1.5], [{"a": Raw("1.00000000000000000001")}], DEEP,
          Raw("1.00000000000000000001"), Raw("123456789012345678901234"), "9" * 25, NESTED_50, NESTED_150],
}  # fmt: skip
"""Values of the fields the fast paths read, each a common one or a near miss of one; and of a
member no format has, `x`: containers nested deeper than a fast path reads, or holding floats."""

_DAYS = (date.min - date(1970, 1, 1)).days, (date.max - date(1970, 1, 1)).days
BOUNDS = sorted(
    {bound + step for low, high in [_DAYS] + [(low * 86_400 * unit, (high + 1) * 86_400 * unit - 1)
     for low, high in [_DAYS] for unit in (1_000, 1_000_000)] for bound in (low, high) for step in (-1, 0, 1)}
    | {0, -1, 2**31 - 1, 2**31, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64}
)  # fmt: skip
"""Integers at the bounds of what the core reads: the first and last day, millisecond and
microsecond of the years 1 to 9999 (and one beyond), and of 32-bit, 64-bit and unsigned 64-bit."""


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every member and item of a JSON value."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield (*prefix, name)
            yield from paths(item, (*prefix, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from paths(item, (*prefix, index))


def mutate_value(value: Any, rng: random.Random) -> Any:
    """A copy of a JSON value with one member or item dropped, replaced, or unwrapped."""
    value = copy.deepcopy(value)
    every = list(paths(value))
    if not every:
        return rng.choice(HOSTILE_VALUES)
    # Fields a fast path reads, more often than others.
    known = [path for path in every if path[-1] in FIELD_VALUES]
    path = rng.choice(known) if known and rng.random() < 0.6 else rng.choice(every)
    *parents, last = path
    container = value
    for step in parents:
        container = container[step]
    roll = rng.random()
    if roll < 0.1:
        del container[last]
    elif roll < 0.2 and isinstance(container, dict):
        # A member renamed: `"Payload"`, `"OP"`.
        renamed = {(name.swapcase() if name == last else name): item for name, item in container.items()}
        container.clear()
        container.update(renamed)
    elif roll < 0.3 and isinstance(container[last], dict):
        # A member the object did not have.
        name = rng.choice(list(FIELD_VALUES))
        container[last][name] = rng.choice(FIELD_VALUES[name])
    elif roll < 0.6 and last in FIELD_VALUES:
        container[last] = rng.choice(FIELD_VALUES[last])
    else:
        container[last] = rng.choice(HOSTILE_VALUES)
    return value


def render(value: Any, rng: random.Random) -> str:
    """JSON text, compact as the converter writes it (or, now and then, with spaces or \\u escapes)."""
    return dumps(value, compact=rng.random() < 0.9, ensure_ascii=rng.random() < 0.2)


def dumps(value: Any, *, compact: bool = True, ensure_ascii: bool = False) -> str:
    """`json.dumps`, each `Raw` written as its text."""
    raws: list[str] = []

    def raw_token(item: Any) -> Any:
        if isinstance(item, Raw):
            raws.append(item.text)
            return f"@raw{len(raws) - 1}@"
        raise TypeError(type(item).__name__)

    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(value, default=raw_token, separators=separators, ensure_ascii=ensure_ascii)
    return re.sub(r'"@raw(\d+)@"', lambda match: raws[int(match.group(1))], text)


def mutate_text(text: str, rng: random.Random) -> str:
    """A text cut, given a repeated or extra member, or changed by one character."""
    roll = rng.random()
    if roll < 0.25:
        return text[: rng.randrange(len(text) + 1)]
    if roll < 0.5 and text.endswith("}"):
        member = rng.choice(
            ['"op":"d"', '"op":"c"', '"payload":null', '"source":null', '"after":{"id":1}', '"status":"END"', '"x":1.5']
        )
        return text[:-1] + "," + member + "}"
    if roll < 0.65:
        return " " + text
    if roll < 0.75 and text:
        # Its last character changed: a converter message cut before its closing brace.
        return text[:-1] + rng.choice([" ", "]", "\n"])
    position = rng.randrange(len(text) + 1)
    return text[:position] + rng.choice(['"', "}", ",", "1", " ", "\\", "é"]) + text[position:]


def mutate_message(text: str | None, rng: random.Random) -> str | None:
    """A mutant of a key or payload: its JSON changed, its schema block dropped, or its text."""
    if text is None or rng.random() < 0.05:
        return rng.choice([None, "null", "{}", "[]", '"x"'])
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # a mutant's mutant: not JSON, or too deep for `json`
        return mutate_text(text, rng)
    roll = rng.random()
    if roll < 0.15 and isinstance(value, dict) and "payload" in value:
        value = value["payload"]  # schemas.enable=false
    elif roll < 0.85:
        value = mutate_value(value, rng)
    else:
        return mutate_text(text, rng)
    return render(value, rng)


LINE_FIELD_VALUES: dict[str, list[Any]] = {
    "topic": ["t", "", None, 5],
    "partition": [0, 1, -1, 2**31, True, 1.0, "1", None],
    "offset": [0, 7, -1, 2**63 - 1, 2**63, 2**64, False, 7.0, None],
    "ts": [None, 0, -1, 2**63 // 1000, 2**63 // 1000 + 1, 1.5, True, "1", Raw("123456789012345678901234")],
    "key": [None, "", '{"id":1}', {"id": 1}, 5, ["a"]],
    "payload": [None, "", "{}", {"op": "c"}, 5, 1.5],
    "headers": [None, [], ["h", "v"], ["h", "v", "h2"], ["h", None], ["h", 1], {"h": ["v", "w"]}, {"h": "v"}, "x"],
    "key_error": [None, "", "boom", 1],
    "payload_error": [None, "", "boom", 0.0],
}
"""Values of a kcat line's members: the common ones, other types, bounds."""


def mutate_line(line: str, rng: random.Random) -> str:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return mutate_text(line, rng)
    if rng.random() < 0.2:
        return mutate_text(line, rng)
    name = rng.choice(list(LINE_FIELD_VALUES))
    if rng.random() < 0.15:
        record.pop(name, None)
    else:
        record[name] = rng.choice(LINE_FIELD_VALUES[name])
    return render(record, rng)


# --- the tests --------------------------------------------------------------------------------


def check_all(inputs: list[Any], check: Callable[[Any, Tally], None]) -> Tally:
    tally = Tally()
    for item in inputs:
        check(item, tally)
    return tally


def test_the_hostile_corpus() -> None:
    tally = check_all(hostile_lines(), check_line)
    assert tally.lines_fast > 0 and tally.records_fast > 0


def test_the_shared_corpus_with_every_kind_of_key() -> None:
    records = [(key, message, 0, offset, "dbserver1.inventory.customers") for offset, message in
               enumerate(corpus_messages()) for key in KEYS]  # fmt: skip
    tally = check_all(records, check_record)
    assert tally.records > 1_000
    assert tally.records_fast > tally.records / 10


def test_a_generated_stream() -> None:
    tally = check_all(generated_lines(), check_line)
    assert tally.lines_fast == tally.lines
    # All but the demo's Qlik and MongoDB records, and the truncate.
    assert tally.records_fast > 0.9 * tally.records


def test_mutations_of_a_generated_stream() -> None:
    """Mutants interleaved with the lines they come from, so that recent schema blocks are known."""
    rng = random.Random(SEED)
    lines, records = Tally(), Tally()
    for line in generated_lines():
        check_line(line, lines)
        landed = parse_kcat_line_generally(line)
        key, payload, partition, offset, topic = record_of(landed)
        for _ in range(MUTANTS_PER_LINE - 1):
            if rng.random() < 0.3:
                key = mutate_message(key, rng)
            else:
                payload = mutate_message(payload, rng)
            check_record((key, payload, partition, offset, topic), records)
            # The next mutant is one of this one now and then, so that mutations add up.
            if rng.random() < 0.5:
                key, payload = record_of(landed)[:2]
        check_line(mutate_line(line, rng), lines)
    assert lines.lines_fast > 0.3 * lines.lines
    assert 0.2 * records.records < records.records_fast < 0.9 * records.records


def objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in a value, itself included, but those inside a converter's schema block
    (`field_schemas`, and `test_mutations_of_a_generated_stream`, change those)."""
    if isinstance(value, dict):
        yield value
        for name, item in value.items():
            if name != "schema":
                yield from objects(item)
            elif isinstance(item, dict):
                yield item  # its own members: its name and type
    elif isinstance(value, list):
        for item in value:
            yield from objects(item)


def field_schemas(message: Any) -> Iterator[dict[str, Any]]:
    """The field schemas of the row images (`before`, `after`) in a converter's schema block."""
    schema = message.get("schema") if isinstance(message, dict) else None
    for image in schema.get("fields", []) if isinstance(schema, dict) else []:
        if isinstance(image, dict) and image.get("field") in ("before", "after"):
            yield from (field for field in image.get("fields", []) if isinstance(field, dict))


def near_misses(text: str) -> Iterator[str]:
    """The message with each of its objects given each value of `FIELD_VALUES` (added or
    replacing its own), one member fewer, or an integer member at each of `BOUNDS` (or of another
    type); and with each field of its row images declared of each logical type: every near miss
    of a shape a fast path reads."""
    message = json.loads(text)
    for target in objects(message):
        members = list(target.items())
        for name in list(target):
            del target[name]
            yield dumps(message)
            target.clear()
            target.update(members)
        for name, values in FIELD_VALUES.items():
            for value in values:
                target[name] = value
                yield dumps(message)
            target.clear()
            target.update(members)
        for name, member in members:
            if type(member) is int:
                for bound in [*BOUNDS, True, False, 1.5, "1", None]:
                    target[name] = bound
                    yield dumps(message)
                target[name] = member
    for field in field_schemas(message):
        members = list(field.items())
        for logical_type in FIELD_VALUES["name"]:
            field["name"] = logical_type
            yield dumps(message)
        # A decimal of each scale, or of parameters of another shape.
        field["name"] = DECIMAL
        for parameters in [*FIELD_VALUES["parameters"], *({"scale": scale} for scale in FIELD_VALUES["scale"])]:
            field["parameters"] = parameters
            yield dumps(message)
        field.clear()
        field.update(members)


DECIMAL = "org.apache.kafka.connect.data.Decimal"


def test_near_misses_of_each_shape() -> None:
    """Each field a fast path reads, in each object of a message of each shape, given each value
    it is tested with: systematic where `test_mutations_of_a_generated_stream` samples."""
    shapes: dict[tuple[str | None, str], Record] = {}
    for line in generated_lines():
        record = record_of(parse_kcat_line_generally(line))
        shape = re.search(r'"(op|status)":"?(\w+)', record[1] or "null")
        shapes.setdefault((record[4], shape.group(0) if shape else "tombstone"), record)
    tally = Tally()
    for key, payload, partition, offset, topic in shapes.values():
        check_record((key, payload, partition, offset, topic), tally)
        for mutant in near_misses(payload) if payload is not None else ():
            check_record((key, mutant, partition, offset, topic), tally)
        for mutant in near_misses(key) if key is not None else ():
            check_record((mutant, payload, partition, offset, topic), tally)
    assert 0.1 * tally.records < tally.records_fast < 0.9 * tally.records


# --- the logical types the row change fast path decodes itself ---------------------------------


def logical_values(rng: random.Random) -> Iterator[Any]:
    """Integers over all a 64-bit count of days, milliseconds or microseconds reaches (most of them
    within the years 1 to 9999), at the bounds, and values of other types."""
    yield from [*BOUNDS, True, False, 1.5, "1", None, "__debezium_unavailable_value"]
    for _ in range(20_000):
        yield rng.randrange(-(2**63), 2**63)
        yield rng.randrange(BOUNDS[0], BOUNDS[-1])
        yield rng.randrange(-(10**6), 10**6)  # days around the epoch
        yield rng.randrange(-(10**14), 10**14)  # milliseconds around it


def decoded(value: Any, field_schema: dict[str, Any]) -> str | None:
    """`decode_value` of a value, or None where it refuses it."""
    try:
        return str(decode_value(value, field_schema))
    except RecordError:
        return None


def test_dates_and_timestamps_are_written_as_logical_types_writes_them() -> None:
    rng = random.Random(SEED)
    values = list(logical_values(rng))
    for name in ("io.debezium.time.Date", "io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp"):
        field_schema = {"type": "int64", "name": name, "field": "at"}
        decoder = _common_decoder(field_schema)
        assert decoder is not None
        answered = 0
        for value in values:
            text = decoder(value)
            if text is not None:
                answered += 1
                assert text == decoded(value, field_schema), f"{name} {value!r}"
        assert answered > 10_000


def test_decimals_are_written_as_logical_types_writes_them() -> None:
    """Each scale, the values at the bounds of their bytes and random ones, each asked twice (the
    second time remembered), and texts that are not base64 or not a value to decode."""
    rng = random.Random(SEED)
    unscaled = [0, 1, -1, 127, 128, -128, -129, 2**63, -(2**63), 10**40, -(10**40)]
    unscaled += [rng.randrange(-(2**80), 2**80) for _ in range(2_000)]
    texts = [base64.b64encode(number.to_bytes((number.bit_length() + 8) // 8, "big", signed=True)).decode()
             for number in unscaled]  # fmt: skip
    texts += ["", "TEg", "TEg=\n", " TEg=", "TEg==", "TE-=", "é", "__debezium_unavailable_value", UNAVAILABLE_BYTES]
    for parameters in [*FIELD_VALUES["parameters"], *({"scale": scale} for scale in FIELD_VALUES["scale"])]:
        field_schema = {"type": "bytes", "name": DECIMAL, "parameters": parameters, "field": "price"}
        decoder = _common_decoder(field_schema)
        for value in [*texts, *texts, 5, 1.5, None]:
            text = decoder(value) if decoder is not None else None
            assert text is None or text == decoded(value, field_schema), f"{parameters} {value!r}"
    assert _common_decoder({"type": "bytes", "name": DECIMAL, "parameters": {"scale": "2"}}) is not None
