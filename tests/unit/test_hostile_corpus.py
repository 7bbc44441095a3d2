"""The hostile corpus (tests/hostile): every line lands as the build lands it, and each case gets
the outcome its README table says.

The build's path, mirrored: a file's lines (Hadoop's line ends, blank lines dropped as
`stg_kafka__kcat_lines` does) → `cdc_parse_kcat_line`; a landing reason goes to the quarantine as
is; else `cdc_parse_record(key, payload, partition, offset, topic)`; then (int_qlik_records_bound)
a Qlik data message quarantined as `unknown_qlik_schema` is bound to the metadata message of its
`schemaId` (a bare one by its topic and column names, udfs.qlik_binding) and parsed again by
`cdc_parse_qlik_record`.
"""

import gzip
import json
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.parsing_contract import check_landed_row, check_parsed
from udfs.events import ParsedRecord
from udfs.json_text import MAX_DETAIL_CHARS
from udfs.landing import decode_kafka_bytes
from udfs.qlik import parse_qlik_record
from udfs.qlik_binding import MetadataMessage, QlikBinder
from udfs.reasons import Reason
from udfs.records import parse_record
from udfs.spark import parse_kcat_line_row

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"
README = HOSTILE / "README.md"
NO_IDENTITY = "(no identity)"


@dataclass(frozen=True)
class Landed:
    """One line's fate: its file and identity (when it has one) and the parse of the record."""

    file: str
    topic: str | None
    partition: int | None
    offset: int | None
    payload: str | None
    parsed: ParsedRecord

    @property
    def expected_text(self) -> str:
        """`change c`, `ignored tombstone`, `quarantine invalid_json`: the README's words."""
        parsed = self.parsed
        return f"{parsed.outcome} {parsed.op or parsed.ignore_class or parsed.reason}"


def landed_lines(data: bytes) -> list[bytes]:
    """Lines as Spark's text source reads them (`\\n`, `\\r\\n` or `\\r` end a line, the last line
    needs none), less those that `trim` leaves empty."""
    return [line for line in re.split(rb"\r\n|\r|\n", data) if line.strip(b" ")]


def land(file: str, line: bytes) -> Landed:
    text, detail = decode_kafka_bytes(line, "the kcat line")
    if text is None:
        parsed = ParsedRecord(outcome="quarantine", reason=Reason.INVALID_ENCODING.value, detail=detail)
        return Landed(file, None, None, None, None, check_parsed(parsed))
    landed = check_landed_row(parse_kcat_line_row(text))
    if landed.reason is not None:
        parsed = ParsedRecord(outcome="quarantine", reason=landed.reason, detail=landed.detail)
        return Landed(file, landed.topic, landed.partition, landed.offset, landed.payload, parsed)
    assert landed.topic is not None and landed.partition is not None and landed.offset is not None
    parsed = parse_record(landed.key, landed.payload, landed.partition, landed.offset, landed.topic)
    return Landed(file, landed.topic, landed.partition, landed.offset, landed.payload, parsed)


def bind_qlik(records: list[Landed]) -> list[Landed]:
    """int_qlik_records_bound: each waiting Qlik data message parsed again with its metadata,
    chosen by the model's rule (udfs.qlik_binding)."""
    binder = QlikBinder()
    for record in records:
        if record.parsed.ignore_class == "metadata_message":
            assert record.partition is not None and record.offset is not None and record.payload is not None
            assert record.parsed.qlik_schema_id is not None
            metadata = MetadataMessage(
                record.topic, record.partition, record.offset, record.parsed.qlik_schema_id, record.payload
            )
            binder.add_metadata(metadata)
    bound = []
    for record in records:
        if record.parsed.reason == "unknown_qlik_schema":
            assert record.partition is not None and record.offset is not None and record.payload is not None
            metadata_payload = binder.metadata_for(
                record.topic, record.partition, record.offset, record.parsed.qlik_schema_id, record.payload
            )
            if metadata_payload is not None:
                parsed = parse_qlik_record(record.payload, metadata_payload, record.partition, record.offset)
                record = replace(record, parsed=parsed)
        bound.append(record)
    return bound


def read_folder(folder: Path) -> list[tuple[str, int, bytes]]:
    """(file, line number, line) of every landed line of the kcat files in `folder`."""
    lines: list[tuple[str, int, bytes]] = []
    for path in sorted(folder.iterdir()):
        if path.name.endswith((".jsonl", ".jsonl.gz")):
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            lines.extend((path.name, number, line) for number, line in enumerate(landed_lines(data), 1))
    return lines


def land_folder(folder: Path) -> list[Landed]:
    return bind_qlik([land(file, line) for file, _, line in read_folder(folder)])


def readme_tables() -> dict[str, list[tuple[str, str]]]:
    """Per file (its `## \\`name\\`` heading), the table rows in order: (topic, expected)."""
    tables: dict[str, list[tuple[str, str]]] = {}
    file = None
    for line in README.read_text().splitlines():
        if heading := re.fullmatch(r"## `([^`]+)`", line):
            file = heading.group(1)
            tables[file] = []
        elif file and (row := re.fullmatch(r"\| (`[^`]+`|\(no identity\)) \| ([a-z_]+ [a-z_]+) \| .+ \|", line)):
            tables[file].append((row.group(1).strip("`"), row.group(2)))
    return tables


@cache
def corpus() -> list[Landed]:
    """The whole corpus landed (in a test, so that a crash fails tests rather than collection)."""
    return land_folder(HOSTILE)


LINES = read_folder(HOSTILE)


def line_param(index: int) -> Any:
    file, number, _ = LINES[index]
    return pytest.param(index, id=f"{file}:{number}")


def test_the_readme_lists_every_file_and_only_those() -> None:
    files = sorted(path.name for path in HOSTILE.iterdir() if path.name != README.name)
    assert sorted(readme_tables()) == files


def test_every_case_gets_the_outcome_its_readme_row_says() -> None:
    actual: dict[str, list[tuple[str, str]]] = {}
    for record in corpus():
        actual.setdefault(record.file, []).append((record.topic or NO_IDENTITY, record.expected_text))
    assert actual == readme_tables()


def test_records_have_distinct_identities() -> None:
    identities = [(record.topic, record.partition, record.offset) for record in corpus() if record.topic is not None]
    assert len(identities) == len(set(identities))
    assert all(topic.startswith("hostile.") for topic, _, _ in identities)


@pytest.mark.parametrize("index", [line_param(index) for index in range(len(LINES))])
def test_every_line_keeps_the_contract(index: int) -> None:
    """Exactly one of change, ignored, quarantine (a documented reason, a detail, never the payload)."""
    parsed = check_parsed(corpus()[index].parsed)
    assert parsed.detail is None or len(parsed.detail) <= MAX_DETAIL_CHARS + 40


def by_topic(topic: str) -> ParsedRecord:
    (record,) = (record for record in corpus() if record.topic == topic)
    return record.parsed


def test_wide_integers_stay_exact() -> None:
    after = json.loads(by_topic("hostile.2pow80-in-after").after or "")
    assert (after["big"], after["small"]) == (2**80, -(2**63) - 1)
    assert by_topic("hostile.2pow80-key").row_key == '{"id":1208925819614629174706176}'


def test_values_beyond_spark_types_are_dropped() -> None:
    parsed = by_topic("hostile.huge-timestamps")
    assert (parsed.source_ts_ms, parsed.event_ts_ms) == (None, None)
    assert by_topic("hostile.huge-lsn").position == f"s:25{2**80}.0824023119.0824023128"


def test_last_of_duplicate_keys_wins() -> None:
    assert by_topic("hostile.duplicate-key-id").row_key == '{"id":2}'


def test_qlik_data_bound_to_its_metadata_knows_its_table_and_key() -> None:
    parsed = by_topic("hostile.qlik-data")
    assert (parsed.source_table, parsed.row_key, parsed.changed_columns) == (
        "SALES.CUSTOMERS",
        '{"ID":"14"}',
        ("NAME",),
    )


def test_huge_payloads(tmp_path: Path) -> None:
    """Megabytes, made here rather than checked in: a 2 MB column, that payload cut, 2 MB of garbage."""
    after = {"id": 1, "notes": "x" * 2_000_000}
    payload = json.dumps({"op": "c", "source": {"connector": "postgresql", "table": "t"}, "after": after})

    def kcat(offset: int, text: str) -> str:
        return json.dumps(
            {
                "topic": f"hostile.huge-{offset}",
                "partition": 0,
                "offset": offset,
                "tstype": "create",
                "ts": 1,
                "broker": 0,
                "key": '{"id":1}',
                "payload": text,
            }
        )

    lines = [kcat(1, payload), kcat(2, payload[:-1_000_000]), "{" + "garbage " * 250_000]
    (tmp_path / "huge.jsonl").write_text("\n".join(lines) + "\n")
    records = land_folder(tmp_path)
    assert [record.expected_text for record in records] == [
        "change c",
        "quarantine invalid_json",
        "quarantine invalid_landing_line",
    ]
    assert json.loads(records[0].parsed.after or "") == after
    for record in records:
        check_parsed(record.parsed)
        assert len(record.parsed.detail or "") <= MAX_DETAIL_CHARS + 40  # never the payload itself
