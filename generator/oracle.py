"""The oracle: the final state every consumer should reach, one source table after another.

A state maps each source table to its live rows under their canonical row keys, as
`cdc_current` keys and holds them; `write_oracle` writes it, one row per line.
"""

import json
from pathlib import Path
from typing import Any

from generator.kafka import compact

Row = dict[str, Any]
State = dict[str, dict[str, Row]]
"""source_table → canonical row_key → row."""


def canonical(value: Any) -> str:
    """`value` as canonical JSON (sorted keys, compact, UTF-8 kept): how row keys are written."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write_oracle(path: Path, state: dict[str, dict[str, Row]]) -> None:
    """The expected final state, one row per line so that diffs stay readable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("{")
        for table_number, (table, rows) in enumerate(state.items()):
            out.write(("," if table_number else "") + f"\n{compact(table)}: {{")
            for row_number, (key, row) in enumerate(rows.items()):
                out.write(("," if row_number else "") + f"\n{compact(key)}: {compact(row)}")
            out.write("\n}")
        out.write("\n}\n")
