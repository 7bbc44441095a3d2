"""The randomized harness (tests/harness.py) against real builds: arrival order, duplicates,
re-deliveries, late events and truncates in other partitions must not change `cdc_current` and
`cdc_history`, which must equal the harness's oracle (docs/ordering-and-history.md).

Builds are the cost (about a minute each here), so one landing holds several independent
scenarios side by side, each its own `source.db` (they never mix), and five builds check everything:

- `growing`: the records in three arrival batches, older events held back to later batches
  (late arrival), each batch a random permutation into files plus duplicates in other files and
  the truncates in a file of their own sorting *first*; built incrementally after each batch
  lands beside the ones before (same schema, same landing folder), then once more with
  `--full-refresh`.
- `permuted`: the same records in another permutation and file split, other duplicates, the
  truncates in a file sorting *last*; built once.

Both landings hold every event twice or more for some (re-delivered at new offsets after simulated
connector restarts). Builds killed half-way are in test_interrupted_builds.py.

Why this size (4 scenarios of 600 events): a build's cost here is its fixed number of queries, not
its rows, so more events cost little; fewer would risk seeds whose landings miss a case the
properties need (late updates before deletes, late truncates, re-deliveries), which
`test_the_landings_hold_what_the_properties_need` guards.
"""

import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.harness import (
    Event,
    Oracle,
    RowId,
    Scenario,
    arrival_batches,
    decode_events,
    duplicate_into_other_files,
    first_arrivals,
    generate_scenario,
    is_truncate,
    late_truncates,
    late_updates_before_deletes,
    move_to_own_file,
    oracle_of_records,
    partitions_written_before,
    record_id,
    redeliver,
    split_into_files,
    write_landing,
)
from tests.integration.conftest import Build, DbtProject
from tests.kcat import KafkaRecord

pytestmark = pytest.mark.slow

SEED = 20240604
SCENARIOS = (("harness_a", 1, 3), ("harness_b", 2, 2), ("harness_c", 3, 4), ("harness_d", 4, 3))
"""(source_db, seed, partitions): independent streams landed side by side."""
EVENTS_PER_SCENARIO = 600
RESTARTS, RESTART_WINDOW = 2, 25
"""Per scenario: connector restarts, and the events each one publishes again at new offsets."""
DUPLICATE_SHARE = 0.05
LATE_SHARE = 0.05
BATCHES = 3
COMPACTION_THRESHOLDS = [1.0, 1000.0, 0.0]
"""The `compaction_threshold` of each batch's build: the second only adds a generation of the keys
it touched, the third compacts."""

CORE_MODELS = "+cdc_current +cdc_history +cdc_quarantine"
"""What the properties read, with everything upstream and its tests: typed marts and operational
tables would only add build time."""

HistoryRow = tuple[int, Any, int, int | None, bool, str | None]
"""(version, row, valid_from, valid_to, is_current, ended_by), times in epoch milliseconds."""


@dataclass(frozen=True)
class Tables:
    """`cdc_current` and `cdc_history` of one build, read back into Python."""

    current: dict[RowId, tuple[Any, str, int]]
    """key → (row, op, source_ts)"""
    history: dict[RowId, list[HistoryRow]]
    quarantined: int

    def parsed(self) -> "Tables":
        """Rows as JSON values rather than text, to compare with the oracle."""
        return Tables(
            {key: (json.loads(row), op, ts) for key, (row, op, ts) in self.current.items()},
            {
                key: [(v, json.loads(row), *rest) for v, row, *rest in versions]
                for key, versions in self.history.items()
            },
            self.quarantined,
        )


def read_tables(build: Build) -> Tables:
    current_rows = build.rows(
        "select source_db, source_table, row_key, row, op, unix_millis(source_ts) as source_ts"
        " from `{schema}`.cdc_current"
    )
    current = {
        (row["source_db"], row["source_table"], row["row_key"]): (row["row"], row["op"], row["source_ts"])
        for row in current_rows
    }
    assert len(current) == len(current_rows), "one cdc_current row per key"
    history: dict[RowId, list[HistoryRow]] = {}
    for row in build.rows(
        "select source_db, source_table, row_key, version, row, unix_millis(valid_from) as valid_from,"
        " unix_millis(valid_to) as valid_to, is_current, ended_by from `{schema}`.cdc_history"
    ):
        history.setdefault((row["source_db"], row["source_table"], row["row_key"]), []).append(
            (row["version"], row["row"], row["valid_from"], row["valid_to"], row["is_current"], row["ended_by"])
        )
    for versions in history.values():
        versions.sort(key=lambda version: version[0])
    quarantined = build.rows("select count(*) as n from `{schema}`.cdc_quarantine")[0]["n"]
    return Tables(current, history, quarantined)


def expected_tables(expected: Oracle) -> Tables:
    return Tables(
        {key: (current.row, current.op, current.source_ts) for key, current in expected.current.items()},
        {
            key: [
                (number, version.row, version.valid_from, version.valid_to, version.is_current, version.ended_by)
                for number, version in enumerate(versions, start=1)
            ]
            for key, versions in expected.history.items()
        },
        0,
    )


def differences(actual: Tables, expected: Tables, keys: Callable[[RowId], bool] = lambda key: True) -> list[str]:
    """The first differing keys (current row, then history), each with both sides; [] when equal."""
    found = []
    for name, left, right in (
        ("cdc_current", actual.current, expected.current),
        ("cdc_history", actual.history, expected.history),
    ):
        for key in sorted(k for k in left.keys() | right.keys() if keys(k)):
            if left.get(key) != right.get(key):
                found.append(f"{name} {key}:\n  build:    {left.get(key)}\n  expected: {right.get(key)}")
    if actual.quarantined != expected.quarantined:
        found.append(f"quarantined records: {actual.quarantined}, expected {expected.quarantined}")
    return found[:8] + ([f"... {len(found) - 8} more"] if len(found) > 8 else [])


def assert_same(actual: Tables, expected: Tables, keys: Callable[[RowId], bool] = lambda key: True) -> None:
    found = differences(actual, expected, keys)
    assert not found, "\n".join(found)


# --------------------------------------------------------------------------------------------
# The landings
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Landings:
    scenarios: list[Scenario]
    originals: list[KafkaRecord]
    """Every scenario's records as the connector first published them."""
    redelivered: list[KafkaRecord]
    """The same events again at new offsets (connector restarts)."""
    batches: list[list[KafkaRecord]]
    """`originals + redelivered` in BATCHES arrival batches (some events late)."""
    growing: Path
    growing_files: list[list[list[KafkaRecord]]]
    """Per batch, its files (duplicates included); batch n lands in `growing/batch-n`."""
    permuted: Path
    permuted_files: list[list[KafkaRecord]]

    def land_batch(self, number: int, folder: Path | None = None) -> None:
        """Batch `number` into `growing` (or another folder the batches grow in)."""
        write_landing((folder or self.growing) / f"batch-{number}", self.growing_files[number])


def files_of(records: Sequence[KafkaRecord], files: int, rng: random.Random) -> list[list[KafkaRecord]]:
    return duplicate_into_other_files(split_into_files(records, files, rng), DUPLICATE_SHARE, rng)


def make_landings(root: Path) -> Landings:
    """The scenarios and both landings under `root` (no batch of `growing` landed yet)."""
    rng = random.Random(SEED)
    scenarios = [
        generate_scenario(db, seed, events=EVENTS_PER_SCENARIO, partitions=partitions)
        for db, seed, partitions in SCENARIOS
    ]
    originals = [record for scenario in scenarios for record in scenario.records]
    redelivered = redeliver(originals, RESTARTS, RESTART_WINDOW, rng)
    records = originals + redelivered
    batches = arrival_batches(records, BATCHES, LATE_SHARE, rng)
    batch_files = [files_of(batches[0], 4, rng)]
    for number in range(1, BATCHES):
        # A later batch also brings records of earlier ones again (a landing job re-copying files).
        again = [record for batch in batches[:number] for record in batch if rng.random() < DUPLICATE_SHARE]
        batch_files.append(files_of(batches[number] + again, 3, rng))
    growing_files = [move_to_own_file(files, is_truncate, first=True) for files in batch_files]
    permuted_files = move_to_own_file(files_of(records, 6, rng), is_truncate, first=False)
    write_landing(root / "permuted", permuted_files)
    return Landings(
        scenarios, originals, redelivered, batches, root / "growing", growing_files, root / "permuted", permuted_files
    )


@pytest.fixture(scope="module")
def landings(tmp_path_factory: pytest.TempPathFactory) -> Landings:
    return make_landings(tmp_path_factory.mktemp("randomized-harness"))


@pytest.fixture(scope="module")
def expected_all(landings: Landings) -> Tables:
    """The oracle of the original events alone: duplicates and re-deliveries must change nothing."""
    return expected_tables(oracle_of_records(landings.originals))


@dataclass(frozen=True)
class GrowingBuilds:
    tables: list[Tables]
    """After each batch."""
    generations: list[dict[str, int]]
    """After each batch: per row-state table, how many generations it holds."""
    loads_per_file: dict[str, int]
    """After the last batch: per landed file, how many builds read it."""


def build_batch_by_batch(
    dbt_project: DbtProject, landings: Landings, schema: str, folder: Path, *, data_tests: bool
) -> GrowingBuilds:
    """One incremental build into `schema` after each batch lands in `folder` beside the ones before.
    With `data_tests`, dbt's data tests run on the last build only, whose intermediate tables hold
    every build's merges; each build's current state, history and changes are compared whole with
    the oracle of what had landed by then."""
    tables, generations = [], []
    for number, threshold in zip(range(BATCHES), COMPACTION_THRESHOLDS, strict=True):
        landings.land_batch(number, folder)
        build = dbt_project.build(folder, schema, {"compaction_threshold": threshold}, select=CORE_MODELS,
                                  data_tests=data_tests and number == BATCHES - 1)  # fmt: skip
        tables.append(read_tables(build))
        count_generations = f"select count(distinct generation) from {schema}.{{}}"
        generations.append(
            {
                table: dbt_project.spark.sql(count_generations.format(table)).first()[0]
                for table in ("int_row_events_sequenced", "int_row_events_versioned")
            }
        )
    loads = dbt_project.spark.sql(
        f"select landed_file, count(distinct loaded_at) as loads from {schema}.int_deliveries_loaded"
        " group by landed_file"
    ).collect()
    return GrowingBuilds(tables, generations, {row["landed_file"]: row["loads"] for row in loads})


@pytest.fixture(scope="module")
def growing_builds(dbt_project: DbtProject, landings: Landings) -> GrowingBuilds:
    """On Delta, the default format."""
    return build_batch_by_batch(dbt_project, landings, "harness_growing", landings.growing, data_tests=True)


@pytest.fixture(scope="module")
def growing_parquet_builds(
    dbt_project: DbtProject, landings: Landings, tmp_path_factory: pytest.TempPathFactory
) -> GrowingBuilds:
    """The same batches on Parquet (merge-on-read); its data tests ran on the demo."""
    os.environ["CDC_TABLE_FORMAT"] = "parquet"
    try:
        folder = tmp_path_factory.mktemp("growing-parquet")
        return build_batch_by_batch(dbt_project, landings, "harness_parquet", folder, data_tests=False)
    finally:
        del os.environ["CDC_TABLE_FORMAT"]


@pytest.fixture(scope="module")
def after_each_batch(growing_builds: GrowingBuilds) -> list[Tables]:
    return growing_builds.tables


@pytest.fixture(scope="module")
def after_first_batch(after_each_batch: list[Tables]) -> Tables:
    return after_each_batch[0]


@pytest.fixture(scope="module")
def after_all_batches(after_each_batch: list[Tables]) -> Tables:
    return after_each_batch[-1]


@pytest.fixture(scope="module")
def fully_refreshed(dbt_project: DbtProject, landings: Landings, after_all_batches: Tables) -> Tables:
    """The growing schema rebuilt from scratch over everything landed (`--full-refresh`). Its data
    tests are left out: the test that reads it proves its tables equal to the incremental builds',
    whose data tests ran."""
    return read_tables(
        dbt_project.build(
            landings.growing, schema="harness_growing", select=CORE_MODELS, full_refresh=True, data_tests=False
        )
    )


@pytest.fixture(scope="module")
def permuted(dbt_project: DbtProject, landings: Landings) -> Tables:
    """The same records landed another way. Data tests left out, as for `fully_refreshed`: its tables
    are proven equal, row text included, to the last incremental build's."""
    return read_tables(
        dbt_project.build(landings.permuted, schema="harness_permuted", select=CORE_MODELS, data_tests=False)
    )


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


def test_the_landings_hold_what_the_properties_need(landings: Landings) -> None:
    """Not a build property: a guard that the seeded landings still exercise every case."""
    events = decode_events(landings.originals)
    assert {event.op for event in events} == {"r", "c", "u", "d", "t"}
    assert len({event.row_id for event in events if event.key}) > 200 * len(SCENARIOS)
    assert len(landings.redelivered) >= RESTARTS * RESTART_WINDOW * len(SCENARIOS)
    for files in (*landings.growing_files, landings.permuted_files):
        flat = [record for file in files for record in file]
        assert len(flat) > len({record_id(record) for record in flat}), "duplicates"
    assert len(late_updates_before_deletes(landings.batches)) >= 5
    assert late_truncates(landings.batches)


def test_permutations_of_arrival_give_identical_tables(after_all_batches: Tables, permuted: Tables) -> None:
    """Two landings of the same records, in other orders, files, batches and duplicates: the same
    tables, row text included."""
    assert_same(after_all_batches, permuted)


def test_incremental_builds_over_random_batches_equal_one_full_refresh(
    after_each_batch: list[Tables], fully_refreshed: Tables, permuted: Tables
) -> None:
    """BATCHES incremental builds, each reading only the files landed since the one before,
    against `--full-refresh` of the same schema and a first build of another permutation."""
    assert len(after_each_batch) == BATCHES
    assert after_each_batch[0] != after_each_batch[1], "each batch changes the tables"
    assert_same(after_each_batch[-1], fully_refreshed)
    assert_same(fully_refreshed, permuted)


ROW_STATE_TABLES = ("int_row_events_sequenced", "int_row_events_versioned")


def test_on_delta_each_build_merges_the_keys_it_touched_and_no_threshold_compacts(
    growing_builds: GrowingBuilds,
) -> None:
    """Each build stamps the rows it merged with its generation; the rows of untouched keys keep
    theirs, whatever `compaction_threshold` says. The oracle tests check each build's tables, and
    the unique grain test that each key's rows are held once."""
    assert growing_builds.generations == [dict.fromkeys(ROW_STATE_TABLES, count) for count in (1, 2, 3)]


@pytest.mark.slow
def test_on_parquet_builds_add_generations_and_a_compaction_drops_the_superseded_ones(
    growing_parquet_builds: GrowingBuilds, growing_builds: GrowingBuilds
) -> None:
    """The first build writes one generation, the second adds the keys it touched as another
    (merge-on-read, nothing rewritten), the third compacts: every key recomputed, the older
    generations dropped. After every batch, the tables are those Delta gives."""
    assert growing_parquet_builds.generations == [dict.fromkeys(ROW_STATE_TABLES, count) for count in (1, 2, 1)]
    for number, (parquet, delta) in enumerate(zip(growing_parquet_builds.tables, growing_builds.tables, strict=True)):
        found = differences(parquet, delta)
        assert not found, f"after batch {number}:\n" + "\n".join(found)


def test_each_incremental_build_reaches_the_oracle_of_what_has_landed(
    after_each_batch: list[Tables], landings: Landings
) -> None:
    """Not only the last build: after every batch, the state and history of the events landed
    so far, late ones still missing."""
    for number, tables in enumerate(after_each_batch):
        landed = [record for batch in landings.batches[: number + 1] for record in batch]
        assert_same(tables.parsed(), expected_tables(oracle_of_records(landed)))


def test_incremental_builds_read_only_new_files(growing_builds: GrowingBuilds, landings: Landings) -> None:
    """Each landed file is read by exactly one build: the deliveries of one file all carry one
    build's load time."""
    landed = {
        path.relative_to(landings.growing).as_posix()
        for path in landings.growing.rglob("*.jsonl")
        if path.stat().st_size > 0  # a batch without truncates has an empty truncates file
    }
    assert {uri.split(f"/{landings.growing.name}/", 1)[1] for uri in growing_builds.loads_per_file} == landed
    assert set(growing_builds.loads_per_file.values()) == {1}


@pytest.mark.parametrize("build", ["after_all_batches", "permuted"])
def test_every_landing_reaches_the_oracle(build: str, expected_all: Tables, request: pytest.FixtureRequest) -> None:
    """Duplicates (same records again) and re-deliveries (same events at new offsets) change
    nothing: the expected tables come from the original events alone."""
    tables: Tables = request.getfixturevalue(build)
    assert_same(tables.parsed(), expected_all)


def test_late_events_are_cut_into_the_history(
    after_first_batch: Tables, after_all_batches: Tables, expected_all: Tables, landings: Landings
) -> None:
    """Keys whose later batches hold only events older than their newest one in the first: the
    late events land in their place, re-cutting versions the first build had already closed."""
    newest_first: dict[RowId, tuple[int, ...]] = {}
    late_only: set[RowId] = set()
    arrivals = first_arrivals(landings.batches)
    for event, batch in arrivals:
        if event.key is not None and batch == 0:
            newest_first[event.row_id] = max(newest_first.get(event.row_id, ()), event.position)
    for event, batch in arrivals:
        if event.key is not None and batch > 0 and event.position < newest_first.get(event.row_id, ()):
            late_only.add(event.row_id)
    for event, batch in arrivals:
        if event.key is not None and batch > 0 and event.position > newest_first.get(event.row_id, ()):
            late_only.discard(event.row_id)
    recut = {key for key in late_only if after_first_batch.history.get(key) != after_all_batches.history.get(key)}
    assert len(recut) >= 10, f"only {len(recut)} keys re-cut by late events"
    assert_same(after_all_batches.parsed(), expected_all, keys=lambda key: key in late_only)


def test_a_late_update_older_than_a_delete_does_not_resurrect_the_row(
    after_first_batch: Tables, after_all_batches: Tables, expected_all: Tables, landings: Landings
) -> None:
    """Keys whose last event, a delete, came in the first batch and the change right before it
    only in a later one: no build has them live; the last has the late change's version, closed
    by the delete."""
    late = late_updates_before_deletes(landings.batches)
    last_events: dict[RowId, tuple[Event, int]] = {}
    for event, batch in first_arrivals(landings.batches):
        if event.key is not None and event.row_id in late:
            last_events[event.row_id] = (event, batch)
    deleted_first = {key for key, (event, batch) in last_events.items() if event.op == "d" and batch == 0}
    assert len(deleted_first) >= 3
    assert not deleted_first & after_first_batch.current.keys()
    assert not deleted_first & after_all_batches.current.keys()
    for key in deleted_first:
        assert after_all_batches.history[key][-1][5] == "d"
    assert_same(after_all_batches.parsed(), expected_all, keys=lambda key: key in late)


def test_a_truncate_in_another_partition_applies_at_its_source_position(
    after_all_batches: Tables, permuted: Tables, expected_all: Tables, landings: Landings
) -> None:
    """Every truncate record sits in another partition than some of the rows it ends; its file
    sorts first in `growing`, last in `permuted`; some arrive after rows written after them."""
    truncates = [record for record in landings.originals if is_truncate(record)]
    assert len(truncates) >= 2 * len(SCENARIOS)
    for truncate in truncates:
        assert partitions_written_before(truncate, landings.originals) - {truncate.partition}
    for files in landings.growing_files:
        assert all(is_truncate(record) for record in files[0])
    assert all(is_truncate(record) for record in landings.permuted_files[-1])
    assert late_truncates(landings.batches)
    ended_by_truncate = {
        key for key, versions in expected_all.history.items() if any(version[5] == "t" for version in versions)
    }
    assert len(ended_by_truncate) >= 20
    for tables in (after_all_batches, permuted):
        assert_same(tables.parsed(), expected_all, keys=lambda key: key in ended_by_truncate)
