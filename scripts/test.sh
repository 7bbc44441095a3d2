#!/usr/bin/env bash
# The whole test suite: Python lint, SQL lint, unit tests of the parsing core, then the Spark and
# dbt tests (corpus streams, the CLI end to end, dbt's own data and unit tests).
#
#   ./scripts/test.sh                 everything (what CI runs)
#   ./scripts/test.sh --fast          the inner loop: ruff, then pytest without the tests marked
#                                     `slow` (cluster, killed builds, randomized harness, CLI build)
#   ./scripts/test.sh -k corpus       any other arguments go to pytest
#
# pytest runs on two processes (pytest-xdist), each with its own SparkSession, on a machine of 2
# cores or more and 22 GiB or more (their JVMs and the processes their tests start held up to
# 18.5 GiB); on one otherwise. CDC_TEST_WORKERS=N sets how many (1: one process, no xdist). Each
# test module stays on one worker, the modules that share the demo's build together and those
# that share a broker or registry together (tests/conftest.py), the longest first.
source "$(dirname "$0")/_bootstrap.sh"
default_workers() {
    local cores memory_kib
    cores="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)"
    memory_kib="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || true)"
    if [ "$cores" -ge 2 ] && [ "${memory_kib:-0}" -ge $((22 * 1024 * 1024)) ]; then echo 2; else echo 1; fi
}
WORKER_COUNT="${CDC_TEST_WORKERS:-$(default_workers)}"
WORKERS=()
if [ "$WORKER_COUNT" -gt 1 ]; then
    WORKERS=(-n "$WORKER_COUNT" --dist loadgroup --no-loadscope-reorder)
fi
if [ "${1:-}" = "--fast" ]; then
    shift
    echo "== ruff" >&2
    ruff check udfs cdc_dbt generator tests bench setup.py
    echo "== pytest (fast: not slow)" >&2
    exec python -m pytest "${WORKERS[@]}" -m "not slow" "$@"
fi
echo "== ruff" >&2
ruff check udfs cdc_dbt generator tests bench setup.py
ruff format --check udfs cdc_dbt generator tests bench setup.py
# mypy and sqlfluff each keep about one core busy: side by side they take the longer one's time
# (35 s here), not the sum (47 s). mypy's report follows sqlfluff's.
echo "== mypy and sqlfluff" >&2
mypy_report="$(mktemp)"
mypy >"$mypy_report" 2>&1 &
mypy_pid=$!
sqlfluff_status=0
sqlfluff lint models tests/singular || sqlfluff_status=$?
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
cat "$mypy_report"
rm -f "$mypy_report"
if [ "$mypy_status" -ne 0 ] || [ "$sqlfluff_status" -ne 0 ]; then
    echo "lint failed: mypy exit $mypy_status, sqlfluff exit $sqlfluff_status" >&2
    exit 1
fi
echo "== pytest" >&2
exec python -m pytest "${WORKERS[@]}" "$@"
