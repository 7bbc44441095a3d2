"""The core tables of the combined build of several modules' landings (conftest.py's
combined_build), read once into Python for a module's assertions, only the rows of the topics it
landed: what the corpus tests compare with each folder's expected results."""

import json
from dataclasses import dataclass
from typing import Any

from tests.integration.conftest import Build


@dataclass(frozen=True)
class CorpusTables:
    changes: list[dict[str, Any]]
    current: list[dict[str, Any]]
    history: list[dict[str, Any]]
    quarantine: list[dict[str, Any]]
    parsed: list[dict[str, Any]]
    """int_records_parsed: every landed record's outcome, ignore class and reason."""

    def changes_of(self, topic: str) -> list[dict[str, Any]]:
        return sorted((row for row in self.changes if row["topic"] == topic), key=lambda row: row["offset"])

    def current_of(self, source_db: str, source_table: str | None = None) -> list[dict[str, Any]]:
        """The current rows of a source database, or of one of its tables."""
        return [row for row in self.current if of_source(row, source_db, source_table)]

    def history_of(self, source_db: str, source_table: str | None = None) -> list[dict[str, Any]]:
        """The versions of a source database, or of one of its tables, by key and version."""
        rows = [row for row in self.history if of_source(row, source_db, source_table)]
        return sorted(rows, key=lambda row: (row["row_key"], row["version"]))


def of_source(row: dict[str, Any], source_db: str, source_table: str | None) -> bool:
    return row["source_db"] == source_db and source_table in (None, row["source_table"])


def corpus_tables(build: Build, topics: set[str]) -> CorpusTables:
    """The rows of `topics` in each core table: what one module landed, whatever the others did."""

    def rows(query: str) -> list[dict[str, Any]]:
        return [row for row in build.rows(query) if row["topic"] in topics]

    return CorpusTables(
        changes=rows(
            "select topic, `offset`, connector, source_db, source_table, op, row_key, before, after,"
            " changed_columns, patch, source_snapshot, unix_millis(source_ts) as source_ts_ms"
            " from `{schema}`.cdc_changes"
        ),
        current=rows(
            "select source_db, source_table, row_key, row, op, unix_millis(source_ts) as source_ts_ms, topic, `offset`"
            " from `{schema}`.cdc_current"
        ),
        history=rows(
            "select source_db, source_table, row_key, row, version, unix_millis(valid_from) as valid_from_ms,"
            " unix_millis(valid_to) as valid_to_ms, is_current, ended_by, topic, `offset` from `{schema}`.cdc_history"
        ),
        quarantine=rows("select topic, `offset`, key, payload, reason from `{schema}`.cdc_quarantine"),
        parsed=rows("select topic, `offset`, outcome, ignore_class, reason from `{schema}`.int_records_parsed"),
    )


def document(text: str | None) -> dict[str, Any] | None:
    """A JSON object column (row, before, after, row_key) as a dict; None for null."""
    return None if text is None else dict(json.loads(text))
