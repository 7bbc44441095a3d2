#!/usr/bin/env bash
# The demo, end to end: installs what it needs, builds the bundled Debezium events (demo/landing)
# into a local warehouse (.warehouse) on an embedded Spark, and prints a short summary.
source "$(dirname "$0")/_bootstrap.sh"
exec python -m cdc_dbt.demo "$@"
