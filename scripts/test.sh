#!/usr/bin/env bash
# The whole test suite: Python lint, SQL lint, unit tests of the parsing core, then the Spark and
# dbt tests (corpus streams, the CLI end to end, dbt's own data and unit tests).
#
#   ./scripts/test.sh                 everything (what CI runs)
#   ./scripts/test.sh --fast          the inner loop: ruff, then pytest without the tests marked
#                                     `slow` (cluster, killed builds, randomized harness, CLI build)
#   ./scripts/test.sh -k corpus       any other arguments go to pytest
source "$(dirname "$0")/_bootstrap.sh"
if [ "${1:-}" = "--fast" ]; then
    shift
    echo "== ruff" >&2
    ruff check udfs cdc_dbt tests bench setup.py
    echo "== pytest (fast: not slow)" >&2
    exec python -m pytest -m "not slow" "$@"
fi
echo "== ruff" >&2
ruff check udfs cdc_dbt tests bench setup.py
ruff format --check udfs cdc_dbt tests bench setup.py
echo "== mypy" >&2
mypy
echo "== sqlfluff" >&2
sqlfluff lint models tests/singular
echo "== pytest" >&2
exec python -m pytest "$@"
