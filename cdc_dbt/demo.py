"""The demo: build the bundled Debezium events, then show what came out, in a few lines.

python -m cdc_dbt.demo        (what scripts/demo.sh runs)
"""

import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_dbt.cli import exit_at_interrupt, run_dbt
from cdc_dbt.session import build_session
from cdc_dbt.settings import Settings, load_settings
from cdc_dbt.warehouse_lock import WarehouseInUseError, hold_warehouse

SAMPLE_ROWS = 3


def main() -> int:
    exit_at_interrupt()
    settings = load_settings()
    try:
        _lock = hold_warehouse(settings.warehouse_dir, "demo")  # held until this process ends
    except WarehouseInUseError as error:
        print(f"cdc-dbt demo: {error}", file=sys.stderr)
        return 3
    log_dir = settings.project_dir / "logs"
    print(f"Building {settings.landing_dir} into {settings.warehouse_dir} (dbt's full log: {log_dir / 'dbt.log'})")
    progress = BuildProgress()
    # The demo's own typed marts (models/marts/examples/) are built for the demo only.
    build = ["build", "--vars", "{example_marts: true}", "--quiet", "--log-path", str(log_dir)]
    if run_dbt(settings, build, callbacks=[progress.on_event]) != 0:
        print(f"The build failed: {', '.join(progress.failed) or 'see the log'} ({log_dir / 'dbt.log'})")
        return 1
    progress.print_tests()
    print_summary(build_session(settings), settings)
    return 0


@dataclass
class BuildProgress:
    """The demo's console while dbt builds (quiet; its log goes to a file): a line per model, the
    data and unit tests counted, and the build's own summary lines (macros/reporting/)."""

    test_statuses: Counter[str] = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)

    def on_event(self, event: Any) -> None:
        name, data = event.info.name, event.data
        if name == "LogModelResult":
            print(
                f"  {data.index:>3}/{data.total} {data.node_info.node_name:<34}"
                f" {data.status:<8} {data.execution_time:5.1f} s",
                flush=True,
            )
        elif name == "LogTestResult":
            self.test_statuses[data.status] += 1
        elif name in ("JinjaLogInfo", "JinjaLogWarning") and "cdc-dbt: this build" in data.msg:
            print(data.msg, flush=True)
        if name in ("LogModelResult", "LogTestResult") and data.status in ("error", "fail"):
            self.failed.append(data.node_info.node_name)

    def print_tests(self) -> None:
        print("  tests: " + ", ".join(f"{count} {status}" for status, count in sorted(self.test_statuses.items())))


def print_summary(spark: SparkSession, settings: Settings) -> None:
    schema = settings.schema

    def rows(query: str) -> list[dict[str, object]]:
        return [row.asDict() for row in spark.sql(query.replace("{schema}", f"`{schema}`")).collect()]

    print(f"\nLanded files: {settings.landing_dir}\nWarehouse:    {settings.warehouse_dir}\n")
    print(f"{'source table':<24}{'changes':>9}{'current rows':>14}{'versions':>10}")
    for table in rows(
        """
        select changes.source_table, changes.changes, coalesce(current.rows, 0) as current_rows,
            coalesce(history.versions, 0) as versions
        from (select source_table, count(*) as changes from {schema}.cdc_changes group by 1) as changes
        left join (select source_table, count(*) as rows from {schema}.cdc_current group by 1) as current
            on changes.source_table = current.source_table
        left join (select source_table, count(*) as versions from {schema}.cdc_history group by 1) as history
            on changes.source_table = history.source_table
        order by 1
        """
    ):
        print(f"{table['source_table']!s:<24}{table['changes']:>9}{table['current_rows']:>14}{table['versions']:>10}")
    quarantined = rows("select reason, count(*) as n from {schema}.cdc_quarantine group by 1 order by 1")
    print("\nQuarantined: " + (", ".join(f"{r['n']} {r['reason']}" for r in quarantined) or "nothing"))

    print("\nA few current rows of inventory.customers (cdc_current):")
    for row in rows(
        "select row_key, row from {schema}.cdc_current"
        f" where source_table = 'inventory.customers' order by row_key limit {SAMPLE_ROWS}"
    ):
        print(f"  {row['row_key']}  {row['row']}")

    busiest = rows(
        "select source_table, row_key from {schema}.cdc_history group by 1, 2 order by count(*) desc, 1, 2 limit 1"
    )
    if busiest:
        busiest_table, key = str(busiest[0]["source_table"]), str(busiest[0]["row_key"])
        print(f"\nHistory of {busiest_table} {key} (cdc_history):")
        # Values as Column literals: Delta's SQL parser drops spark.sql's `:name` parameters on
        # Spark 4.1 (UNBOUND_SQL_PARAMETER, delta-io/delta#7640).
        history = spark.table(f"`{schema}`.cdc_history")
        for version in (
            history.where((F.col("source_table") == busiest_table) & (F.col("row_key") == key))
            .select("version", "valid_from", "valid_to", "ended_by", "row")
            .orderBy("version")
            .collect()
        ):
            print(
                f"  v{version['version']}  {version['valid_from']} → {version['valid_to'] or 'now'!s:<26}"
                f" ended by {version['ended_by'] or '-'}  {version['row']}"
            )


if __name__ == "__main__":
    sys.exit(main())
