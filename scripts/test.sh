#!/usr/bin/env bash
# The whole test suite: Python lint, SQL lint, unit tests of the parsing core, then the Spark and
# dbt tests (corpus streams, the CLI end to end, dbt's own data and unit tests).
source "$(dirname "$0")/_bootstrap.sh"
echo "== ruff" >&2
ruff check udfs cdc_dbt tests bench
ruff format --check udfs cdc_dbt tests bench
echo "== mypy" >&2
mypy
echo "== sqlfluff" >&2
sqlfluff lint models tests/singular
echo "== pytest" >&2
exec python -m pytest "$@"
