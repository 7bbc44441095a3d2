"""Tests of the Debezium PostgreSQL stream generator (`generator`), without Spark.

The checks read the landed files back like an outside consumer would and replay them with a
small applier written here, independent of the generator's own bookkeeping.
"""

import base64
import json
import zlib
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import generator as gen
from cdc_dbt.settings import PACKAGE_PROJECT_DIR
from generator import kafka
from generator.inventory import encode_decimal

PARTITIONS = 2
LINES_PER_FILE = 60  # small, so that every partition rotates through several files
TOPICS = [
    "dbserver1.inventory.customers",
    "dbserver1.inventory.products",
    "dbserver1.inventory.orders",
    "dbserver1.transaction",
]
KCAT_FIELDS = ["topic", "partition", "offset", "tstype", "ts", "broker", "key", "payload"]
UNAVAILABLE = "__debezium_unavailable_value"


# ------------------------------------------------------------------------------------------
# Reading the landed files back
# ------------------------------------------------------------------------------------------


def _run(out: Path, **overrides: Any) -> gen.GenerationSummary:
    options: dict[str, Any] = {
        "events": 400,
        "keys": 120,
        "partitions": PARTITIONS,
        "lines_per_file": LINES_PER_FILE,
    }
    options.update(overrides)
    return gen.generate(out, **options)


def _files(out: Path) -> list[Path]:
    return sorted(path for path in out.rglob("*") if path.is_file())


def _read_kcat(out: Path) -> list[dict[str, Any]]:
    """Every record, in file order (files of one partition sort by their number)."""
    records = []
    for path in _files(out):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            record["_path"] = path
            records.append(record)
    return records


def _value(record: dict[str, Any]) -> dict[str, Any] | None:
    return None if record["payload"] is None else json.loads(record["payload"])


def _changes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Row-change records (not tombstones, not transaction metadata), with parsed value."""
    out = []
    for record in records:
        if record["topic"] == "dbserver1.transaction" or record["payload"] is None:
            continue
        record = dict(record, value=_value(record))
        out.append(record)
    return out


@pytest.fixture(scope="module")
def landed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("generate")
    out, expected = root / "landing", root / "expected.json"
    summary = _run(out, expected_path=expected)
    records = _read_kcat(out)
    return {
        "out": out,
        "summary": summary,
        "records": records,
        "changes": _changes(records),
        "oracle": json.loads(expected.read_text(encoding="utf-8")),
    }


# ------------------------------------------------------------------------------------------
# An independent decoder and applier
# ------------------------------------------------------------------------------------------


def _decode_decimal(text: str, scale: int) -> str:
    unscaled = int.from_bytes(base64.b64decode(text), "big", signed=True)
    return f"{Decimal(unscaled).scaleb(-scale):f}"


def _decode(value: Any, field_schema: dict[str, Any]) -> Any:
    if value is None or value == UNAVAILABLE:
        return value
    name = field_schema.get("name")
    if name == "org.apache.kafka.connect.data.Decimal":
        return _decode_decimal(value, int(field_schema["parameters"]["scale"]))
    if name == "io.debezium.time.Date":
        return (date(1970, 1, 1) + timedelta(days=value)).isoformat()
    if name == "io.debezium.time.MicroTimestamp":
        moment = datetime(1970, 1, 1) + timedelta(microseconds=value)
        return moment.isoformat(timespec="microseconds")
    return value


def _decode_row(row: dict[str, Any], envelope_schema: dict[str, Any]) -> dict[str, Any]:
    after_schema = next(f for f in envelope_schema["fields"] if f["field"] == "after")
    fields = {f["field"]: f for f in after_schema["fields"]}
    return {name: _decode(value, fields[name]) for name, value in row.items()}


def _replay(changes: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Apply the events in LSN order: TOAST keeps the old value, truncate clears the table."""
    state: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    ordered = sorted(changes, key=lambda r: r["value"]["payload"]["source"]["lsn"])
    for record in ordered:
        payload, schema = record["value"]["payload"], record["value"]["schema"]
        table = f"{payload['source']['schema']}.{payload['source']['table']}"
        op = payload["op"]
        if op == "t":
            state[table].clear()  # every earlier row of the table; later ones come after
            continue
        key = json.dumps(json.loads(record["key"])["payload"], separators=(",", ":"))
        if op == "d":
            state[table].pop(key)
            continue
        previous = state[table].get(key, {})
        row = _decode_row(payload["after"], schema)
        state[table][key] = {name: previous[name] if value == UNAVAILABLE else value for name, value in row.items()}
    return state


# ------------------------------------------------------------------------------------------
# Determinism and file layout
# ------------------------------------------------------------------------------------------


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    first, second, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    _run(first, seed=11, expected_path=tmp_path / "a.json")
    _run(second, seed=11, expected_path=tmp_path / "b.json")
    _run(other, seed=12)
    names = [path.relative_to(first) for path in _files(first)]
    assert names == [path.relative_to(second) for path in _files(second)]
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert any((first / n).read_bytes() != (other / n).read_bytes() for n in names)


def test_layout_and_rotation(landed: dict[str, Any]) -> None:
    out, summary = landed["out"], landed["summary"]
    files = _files(out)
    assert sorted(summary.files) == files
    for path in files:
        assert path.parent.name in TOPICS
        partition, number = path.stem.removeprefix("part-").split("-")
        assert 0 <= int(partition) < PARTITIONS
        assert len(number) == 5
        lines = path.read_text(encoding="utf-8").splitlines()
        assert 0 < len(lines) <= LINES_PER_FILE
        for line in lines:
            record = json.loads(line)
            assert record["topic"] == path.parent.name
            assert record["partition"] == int(partition)
    assert any(path.stem.endswith("-00001") for path in files), "no file was rotated"


def test_every_line_is_kcat_json(landed: dict[str, Any]) -> None:
    for path in _files(landed["out"]):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            fields = [name for name in record if name != "headers"]
            assert fields == KCAT_FIELDS  # kcat's own field order
            if "headers" in record:
                assert list(record)[6] == "headers"
                assert len(record["headers"]) % 2 == 0
                assert all(isinstance(h, str) for h in record["headers"])
            assert record["tstype"] == "create"
            assert record["broker"] == 0
            assert isinstance(record["ts"], int)
            assert isinstance(record["offset"], int)
            assert record["key"] is None or isinstance(record["key"], str)
            assert record["payload"] is None or isinstance(record["payload"], str)
            assert record["payload"] is not None or record["key"] is not None


def test_offsets_are_contiguous_per_partition(landed: dict[str, Any]) -> None:
    offsets: dict[tuple[str, int], list[int]] = defaultdict(list)
    for record in landed["records"]:
        offsets[record["topic"], record["partition"]].append(record["offset"])
    assert {topic for topic, _ in offsets} == set(TOPICS)
    for seen in offsets.values():
        assert seen == list(range(len(seen)))


def test_partition_is_crc32_of_the_key(landed: dict[str, Any]) -> None:
    for record in landed["records"]:
        if record["key"] is None:
            assert record["partition"] == 0
        else:
            assert record["partition"] == zlib.crc32(record["key"].encode()) % PARTITIONS


def test_summary_counts(landed: dict[str, Any]) -> None:
    summary, records = landed["summary"], landed["records"]
    assert summary.events == 400
    assert summary.keys == 120
    assert summary.records == len(records)
    assert summary.per_topic == dict(Counter(record["topic"] for record in records))
    ops = Counter(change["value"]["payload"]["op"] for change in landed["changes"])
    assert {op: n for op, n in summary.per_op.items() if n} == dict(ops)
    assert sum(ops.values()) == summary.events
    assert summary.tombstones == sum(1 for r in records if r["payload"] is None)
    assert summary.tombstones == ops["d"]
    tx_records = [r for r in records if r["topic"] == "dbserver1.transaction"]
    assert summary.transaction_records == len(tx_records) == 2 * summary.transactions
    assert summary.toast_updates > 0


# ------------------------------------------------------------------------------------------
# Debezium semantics of the stream
# ------------------------------------------------------------------------------------------


def test_envelope_and_source_shape(landed: dict[str, Any]) -> None:
    source_fields = [
        "version", "connector", "name", "ts_ms", "snapshot", "db", "sequence",
        "schema", "table", "txId", "lsn", "xmin",
    ]  # fmt: skip
    for change in landed["changes"]:
        schema, payload = change["value"]["schema"], change["value"]["payload"]
        assert [f["field"] for f in schema["fields"]] == [
            "before", "after", "source", "op", "ts_ms", "transaction",
        ]  # fmt: skip
        assert schema["name"] == change["topic"] + ".Envelope"
        source_schema = schema["fields"][2]
        assert source_schema["name"] == "io.debezium.connector.postgresql.Source"
        assert [f["field"] for f in source_schema["fields"]] == source_fields
        assert list(payload) == ["before", "after", "source", "op", "ts_ms", "transaction"]
        assert list(payload["source"]) == source_fields
        source = payload["source"]
        assert (source["connector"], source["name"], source["db"]) == (
            "postgresql",
            "dbserver1",
            "inventory_db",
        )
        assert change["topic"] == f"dbserver1.{source['schema']}.{source['table']}"
        if payload["op"] != "t":
            key = json.loads(change["key"])
            assert key["schema"]["name"] == change["topic"] + ".Key"
            assert list(key["payload"]) == ["id"]


def test_snapshot_markers_share_one_position(landed: dict[str, Any]) -> None:
    snapshot = [c["value"]["payload"] for c in landed["changes"] if c["value"]["payload"]["op"] == "r"]
    snapshot.sort(key=lambda p: (p["source"]["ts_ms"], p["ts_ms"]))
    markers = [p["source"]["snapshot"] for p in snapshot]
    assert Counter(markers) == {"first": 1, "last": 1, "true": len(snapshot) - 2}
    assert {(p["source"]["lsn"], p["source"]["txId"]) for p in snapshot} == {
        (snapshot[0]["source"]["lsn"], snapshot[0]["source"]["txId"])
    }
    assert all(p["transaction"] is None and p["before"] is None for p in snapshot)
    streaming = [c["value"]["payload"] for c in landed["changes"] if c["value"]["payload"]["op"] != "r"]
    assert min(p["source"]["lsn"] for p in streaming) > snapshot[0]["source"]["lsn"]
    assert all(p["source"]["snapshot"] == "false" for p in streaming)


def test_streaming_positions_and_transactions(landed: dict[str, Any]) -> None:
    streaming = [c for c in landed["changes"] if c["value"]["payload"]["op"] != "r"]
    payloads = sorted((c["value"]["payload"] for c in streaming), key=lambda p: p["source"]["lsn"])
    lsns = [p["source"]["lsn"] for p in payloads]
    assert len(set(lsns)) == len(lsns), "two events share an LSN"
    # LSNs and txIds change digit count mid-stream: string comparison would misorder them.
    assert min(lsns) < 10**8 <= max(lsns)
    assert min(p["source"]["txId"] for p in payloads) < 1000 <= max(p["source"]["txId"] for p in payloads)
    by_tx: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for payload in payloads:
        sequence = json.loads(payload["source"]["sequence"])
        assert isinstance(payload["source"]["sequence"], str)
        assert len(sequence) == 2
        assert all(isinstance(part, str) for part in sequence)
        assert int(sequence[0]) < int(sequence[1]) == payload["source"]["lsn"]
        by_tx[payload["transaction"]["id"]].append(payload)
    previous_tx = 0
    for tx_id, events in by_tx.items():  # in LSN order
        tx_number, first_lsn = (int(part) for part in tx_id.split(":"))
        assert first_lsn == events[0]["source"]["lsn"]
        assert {e["source"]["txId"] for e in events} == {tx_number}
        assert tx_number > previous_tx
        previous_tx = tx_number
        assert 1 <= len(events) <= 4
        assert [e["transaction"]["total_order"] for e in events] == list(range(1, len(events) + 1))
        assert len({json.loads(e["source"]["sequence"])[0] for e in events}) == 1
        per_table: Counter[str] = Counter()
        for event in events:
            per_table[event["source"]["table"]] += 1
            assert event["transaction"]["data_collection_order"] == per_table[event["source"]["table"]]
    _check_transaction_topic(landed["records"], by_tx)


def _check_transaction_topic(records: list[dict[str, Any]], by_tx: dict[str, list[dict[str, Any]]]) -> None:
    markers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record["topic"] != "dbserver1.transaction":
            continue
        value, key = _value(record), json.loads(record["key"])
        assert value is not None
        assert value["schema"]["name"] == "io.debezium.connector.common.TransactionMetadataValue"
        assert list(value["payload"]) == [
            "status",
            "id",
            "event_count",
            "data_collections",
            "ts_ms",
        ]
        assert key["payload"] == {"id": value["payload"]["id"]}
        markers[value["payload"]["id"]].append(value["payload"])
    assert markers.keys() == by_tx.keys()
    for tx_id, (begin, end) in markers.items():
        events = by_tx[tx_id]
        assert begin["status"] == "BEGIN"
        assert begin["event_count"] is None
        assert begin["data_collections"] is None
        assert end["status"] == "END"
        assert end["event_count"] == len(events)
        counts = Counter(f"inventory.{e['source']['table']}" for e in events)
        assert {d["data_collection"]: d["event_count"] for d in end["data_collections"]} == counts


def test_timestamps_increase_and_lag(landed: dict[str, Any]) -> None:
    positions = sorted(
        (c["value"]["payload"]["source"]["lsn"], c["value"]["payload"]["source"]["ts_ms"]) for c in landed["changes"]
    )
    source_ts = [ts for _, ts in positions]
    assert source_ts == sorted(source_ts), "source.ts_ms goes back while the LSN grows"
    changes = landed["changes"]
    for change in changes:
        payload = change["value"]["payload"]
        assert payload["source"]["ts_ms"] < payload["ts_ms"] <= change["ts"]
        assert datetime.fromtimestamp(change["ts"] / 1000).year == 2024


def test_updates_have_no_before_and_deletes_only_the_key(landed: dict[str, Any]) -> None:
    for change in landed["changes"]:
        payload = change["value"]["payload"]
        if payload["op"] in ("c", "u", "r"):
            assert payload["before"] is None
            assert payload["after"] is not None
        elif payload["op"] == "d":
            assert payload["after"] is None
            before = payload["before"]
            assert before["id"] == json.loads(change["key"])["payload"]["id"]
            assert all(value is None for name, value in before.items() if name != "id")


def test_each_delete_is_followed_by_its_tombstone(landed: dict[str, Any]) -> None:
    by_position = {(r["topic"], r["partition"], r["offset"]): r for r in landed["records"]}
    deletes = [c for c in landed["changes"] if c["value"]["payload"]["op"] == "d"]
    assert deletes
    for delete in deletes:
        tombstone = by_position[delete["topic"], delete["partition"], delete["offset"] + 1]
        assert tombstone["payload"] is None
        assert tombstone["key"] == delete["key"]
    tombstones = [r for r in landed["records"] if r["payload"] is None]
    assert len(tombstones) == len(deletes)


def test_exactly_one_truncate(landed: dict[str, Any]) -> None:
    truncates = [c for c in landed["changes"] if c["value"]["payload"]["op"] == "t"]
    assert len(truncates) == 1
    truncate = truncates[0]
    payload = truncate["value"]["payload"]
    assert truncate["topic"] == "dbserver1.inventory.orders"
    assert truncate["key"] is None
    assert truncate["partition"] == 0
    assert payload["before"] is None
    assert payload["after"] is None
    assert payload["source"]["table"] == "orders"
    assert payload["transaction"] is not None
    later_orders = [
        c
        for c in landed["changes"]
        if c["topic"] == "dbserver1.inventory.orders"
        and c["value"]["payload"]["source"]["lsn"] > payload["source"]["lsn"]
    ]
    assert later_orders
    assert later_orders[0]["value"]["payload"]["op"] == "c"


def test_primary_key_change(landed: dict[str, Any]) -> None:
    records = landed["records"]
    deletes = [r for r in records if r["payload"] and "__debezium.newkey" in r.get("headers", [])]
    creates = [r for r in records if r["payload"] and "__debezium.oldkey" in r.get("headers", [])]
    assert len(deletes) == len(creates) >= 1
    for delete in deletes:
        d = _value(delete)["payload"]
        new_key = delete["headers"][delete["headers"].index("__debezium.newkey") + 1]
        (create,) = [r for r in creates if json.loads(r["key"])["payload"] == json.loads(new_key)]
        c = _value(create)["payload"]
        old_key = create["headers"][create["headers"].index("__debezium.oldkey") + 1]
        assert json.loads(old_key) == json.loads(delete["key"])["payload"]
        assert (d["op"], c["op"]) == ("d", "c")
        assert d["transaction"]["id"] == c["transaction"]["id"]
        assert c["transaction"]["total_order"] == d["transaction"]["total_order"] + 1
        assert c["source"]["lsn"] > d["source"]["lsn"]
        assert c["after"]["id"] != d["before"]["id"]


def test_toast_placeholder_only_on_product_descriptions(landed: dict[str, Any]) -> None:
    toasted = []
    for change in landed["changes"]:
        payload = change["value"]["payload"]
        for name, value in (payload["after"] or {}).items():
            if value == UNAVAILABLE:
                toasted.append((payload["op"], payload["source"]["table"], name))
    assert toasted
    assert set(toasted) == {("u", "products", "description")}


# ------------------------------------------------------------------------------------------
# Logical types and the oracle
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("unscaled", "wire"),
    [(0, "AA=="), (127, "fw=="), (128, "AIA="), (1250, "BOI="), (-1, "/w=="), (-128, "gA=="),
     (-129, "/38="), (9_999_999_999, "AlQL4/8=")],
)  # fmt: skip
def test_decimal_is_java_big_integer_bytes(unscaled: int, wire: str) -> None:
    assert encode_decimal(unscaled) == wire
    assert int.from_bytes(base64.b64decode(wire), "big", signed=True) == unscaled


def test_decimal_schema_and_values_match_the_oracle(landed: dict[str, Any]) -> None:
    oracle = landed["oracle"]["inventory.products"]
    last_price: dict[str, str] = {}
    products = [c for c in landed["changes"] if c["topic"] == "dbserver1.inventory.products"]
    products.sort(key=lambda c: c["value"]["payload"]["source"]["lsn"])
    for change in products:
        fields = change["value"]["schema"]["fields"][1]["fields"]
        price = next(f for f in fields if f["field"] == "price")
        assert price["type"] == "bytes"
        assert price["name"] == "org.apache.kafka.connect.data.Decimal"
        assert price["parameters"] == {"scale": "2", "connect.decimal.precision": "10"}
        after = change["value"]["payload"]["after"]
        if after is not None:
            last_price[f'{{"id":{after["id"]}}}'] = _decode_decimal(after["price"], 2)
    assert oracle
    assert all(last_price[key] == row["price"] for key, row in oracle.items())


def test_oracle_value_formats(landed: dict[str, Any]) -> None:
    oracle = landed["oracle"]
    assert list(oracle) == ["inventory.customers", "inventory.products", "inventory.orders"]
    for table, rows in oracle.items():
        assert rows, table
        for key, row in rows.items():
            assert key == json.dumps({"id": row["id"]}, separators=(",", ":"))
    for row in oracle["inventory.customers"].values():
        stamp = row["updated_at"]
        assert len(stamp) == 26
        assert stamp[10] == "T"
        assert stamp[19] == "."
        datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f")
    for row in oracle["inventory.products"].values():
        whole, fraction = row["price"].lstrip("-").split(".")
        assert whole.isdigit()
        assert len(fraction) == 2
        assert fraction.isdigit()
        assert row["weight"] is None or isinstance(row["weight"], float)
        assert row["description"] != UNAVAILABLE
    for row in oracle["inventory.orders"].values():
        date.fromisoformat(row["order_date"])
        assert len(row["order_date"]) == 10


def test_replaying_the_events_gives_the_oracle(landed: dict[str, Any]) -> None:
    replayed = _replay(landed["changes"])
    assert {table: dict(rows) for table, rows in replayed.items()} == landed["oracle"]


def test_truncate_removed_every_earlier_order(landed: dict[str, Any]) -> None:
    (truncate,) = [c for c in landed["changes"] if c["value"]["payload"]["op"] == "t"]
    truncate_lsn = truncate["value"]["payload"]["source"]["lsn"]
    written_after = {
        json.loads(c["key"])["payload"]["id"]
        for c in landed["changes"]
        if c["topic"] == "dbserver1.inventory.orders"
        and c["key"] is not None
        and c["value"]["payload"]["source"]["lsn"] > truncate_lsn
    }
    assert {row["id"] for row in landed["oracle"]["inventory.orders"].values()} <= written_after


def test_json_encoders_agree(landed: dict[str, Any]) -> None:
    """Output must not depend on whether orjson is installed."""
    for change in landed["changes"][:200]:
        payload = change["value"]["payload"]
        assert kafka._dumps_json(payload) == kafka.dumps(payload)
        assert change["payload"].endswith(kafka._dumps_json(payload).decode() + "}")


# ------------------------------------------------------------------------------------------
# Parquet, output directory handling, CLI
# ------------------------------------------------------------------------------------------


def test_parquet_has_the_spark_kafka_schema_and_same_records(tmp_path: Path, landed: dict[str, Any]) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    out = tmp_path / "parquet"
    _run(out, fmt="parquet")
    files = _files(out)
    assert files
    assert all(path.suffix == ".parquet" for path in files)
    expected_schema = pa.schema(
        [
            ("key", pa.binary()),
            ("value", pa.binary()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("timestamp", pa.timestamp("us", tz="UTC")),
            ("timestampType", pa.int32()),
            ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
        ]
    )
    rows = []
    for path in files:
        table = pq.read_table(path)
        assert table.schema.remove_metadata() == expected_schema
        assert table.num_rows <= LINES_PER_FILE
        rows.extend(table.to_pylist())
    kcat = {(r["topic"], r["partition"], r["offset"]): r for r in landed["records"]}
    assert len(rows) == len(kcat)
    for row in rows:
        record = kcat[row["topic"], row["partition"], row["offset"]]
        assert row["key"] == (record["key"].encode() if record["key"] is not None else None)
        assert row["value"] == (record["payload"].encode() if record["payload"] is not None else None)
        assert round(row["timestamp"].timestamp() * 1000) == record["ts"]
        assert row["timestampType"] == 0
        flat = record.get("headers")
        if flat is None:
            assert row["headers"] is None
        else:
            assert [(h["key"], h["value"].decode()) for h in row["headers"]] == list(
                zip(flat[::2], flat[1::2], strict=True)
            )


def test_existing_output_needs_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "landing"
    _run(out, lines_per_file=20)
    many = len(_files(out))
    with pytest.raises(FileExistsError):
        _run(out)
    summary = _run(out, overwrite=True)
    assert _files(out) == sorted(summary.files)
    assert len(summary.files) < many


@pytest.mark.parametrize(("events", "keys"), [(10, 5), (400, 4), (400, 500)])
def test_sizes_out_of_range_are_refused(tmp_path: Path, events: int, keys: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        gen.generate(tmp_path, events=events, keys=keys)


def test_larger_run_hits_the_requested_sizes(tmp_path: Path) -> None:
    summary = gen.generate(tmp_path / "big", events=20_000, keys=3_000, partitions=3)
    assert summary.events == 20_000
    assert summary.keys == 3_000
    assert summary.per_op["t"] == 1
    assert summary.pk_changes >= 1
    assert {path.parent.name for path in summary.files} == set(TOPICS)


def test_cli_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, expected = tmp_path / "landing", tmp_path / "expected.json"
    assert gen.main(["--out", str(out), "--demo", "--expected", str(expected)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1
    assert printed[0].startswith("wrote 400 events")
    records = _read_kcat(out)
    assert {r["partition"] for r in records} == {0, 1}
    assert json.loads(expected.read_text(encoding="utf-8")).keys() == {
        "inventory.customers",
        "inventory.products",
        "inventory.orders",
        "HR.EMPLOYEES",
        "shop.reviews",
    }
    # The bundled demo is exactly this output: regenerating it changes no byte.
    bundled = PACKAGE_PROJECT_DIR / "demo"
    assert expected.read_bytes() == (bundled / "expected_final_state.json").read_bytes()
    written = sorted(path.relative_to(out) for path in out.rglob("*.json"))
    assert written == sorted(path.relative_to(bundled / "landing") for path in (bundled / "landing").rglob("*.json"))
    assert all((out / path).read_bytes() == (bundled / "landing" / path).read_bytes() for path in written)


def test_cli_reports_bad_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gen.main(["--out", str(tmp_path), "--events", "5"]) == 2
    assert "events must be at least" in capsys.readouterr().err
