"""`cdc_current_consistent` never shows half a transaction: a generated Debezium PostgreSQL stream
(with transaction metadata) lands whole but for one event of a two-event transaction. After that
build the transaction is invisible (its landed event too, and everything after its start), and
the view's `consistent_ts` is its start; once the event lands, the next build shows it whole and
the view is `cdc_current` again."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator import TRANSACTION_TOPIC, generate
from tests.integration.conftest import Build, DbtProject

SCHEMA = "consistent"


def kcat_lines(landing: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted(landing.rglob("*.json")):
        for line in path.read_text().splitlines():
            yield path, json.loads(line)


def envelope(record: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(record["payload"])["payload"]
    return payload


@pytest.fixture(scope="module")
def split_transaction(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A generated stream landed but for the last event of its first transaction of two events."""
    folder = tmp_path_factory.mktemp("consistent")
    landing = folder / "landing"
    generate(landing, events=120, keys=30, seed=11, partitions=1)
    ends = [envelope(record) for _, record in kcat_lines(landing) if record["topic"] == TRANSACTION_TOPIC]
    begins = {end["id"]: end["ts_ms"] for end in ends if end["status"] == "BEGIN"}
    transaction = next(end for end in ends if end["status"] == "END" and end["event_count"] == 2)
    events = [
        (path, record)
        for path, record in kcat_lines(landing)
        if record["topic"] != TRANSACTION_TOPIC
        and record["payload"] is not None
        and (envelope(record).get("transaction") or {}).get("id") == transaction["id"]
    ]
    (path, withheld), _ = sorted(events, key=lambda event: -envelope(event[1])["transaction"]["total_order"])
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if json.loads(line)["offset"] != withheld["offset"]))
    return {"landing": landing, "id": transaction["id"], "begun_ms": begins[transaction["id"]], "withheld": withheld}


def consistent_points(build: Build) -> list[Any]:
    """The view's consistent_ts, the same on every row."""
    return [
        row["consistent_ts"]
        for row in build.rows("select distinct consistent_ts from `{schema}`.cdc_current_consistent")
    ]


CONSISTENT_VIEW_AND_UPSTREAM = "+cdc_current_consistent +cdc_current"
"""What the test reads (the view, cdc_current and cdc_transactions) and their data tests: the
other marts would only add their build time."""


def incomplete_transactions(build: Build) -> list[str]:
    return [
        row["transaction_id"]
        for row in build.rows("select transaction_id from `{schema}`.cdc_transactions where not is_complete")
    ]


def current(build: Build, view: str) -> set[tuple[Any, ...]]:
    return {
        tuple(row.values())
        for row in build.rows(f"select source_db, source_table, row_key, row from `{{schema}}`.{view}")
    }


def test_a_transaction_half_landed_is_invisible_then_whole(
    split_transaction: dict[str, Any], dbt_project: DbtProject
) -> None:
    landing = split_transaction["landing"]
    first = dbt_project.build(landing, schema=SCHEMA, select=CONSISTENT_VIEW_AND_UPSTREAM)
    assert incomplete_transactions(first) == [split_transaction["id"]]
    [consistent_ts] = consistent_points(first)
    assert consistent_ts.timestamp() * 1000 == split_transaction["begun_ms"]
    # Nothing from the transaction's start on, its landed event included, which cdc_current shows.
    late = first.rows("select count(*) as n from `{schema}`.cdc_current_consistent where source_ts >= consistent_ts")
    assert late == [{"n": 0}]
    made_by_it = first.rows(
        "select count(*) as n from `{schema}`.cdc_current"
        f" where source_ts >= timestamp_millis({split_transaction['begun_ms']})"
    )
    assert made_by_it[0]["n"] > 0, "cdc_current shows the half transaction: the view must not"
    assert current(first, "cdc_current_consistent") != current(first, "cdc_current")

    withheld = split_transaction["withheld"]
    (landing / "late.json").write_text(json.dumps(withheld) + "\n")
    second = dbt_project.build(landing, schema=SCHEMA, select=CONSISTENT_VIEW_AND_UPSTREAM)
    assert incomplete_transactions(second) == []
    assert consistent_points(second) == [None]
    assert current(second, "cdc_current_consistent") == current(second, "cdc_current")
