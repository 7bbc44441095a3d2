"""`cdc-dbt`: dbt in the same process as a SparkSession with the project's UDFs (SPEC §2).

cdc-dbt build [dbt flags]        any dbt command, run on the embedded (or SPARK_MASTER_URL) Spark
cdc-dbt sql "<Spark SQL>"        one query; each result row printed as one JSON object per line
"""

import datetime as dt
import decimal
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from cdc_dbt.settings import Settings, load_settings

USAGE = __doc__ or ""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE.strip())
        return 0 if args else 2
    settings = load_settings()
    try:
        if args[0] == "sql":
            if len(args) != 2:
                print('usage: cdc-dbt sql "<Spark SQL query>"', file=sys.stderr)
                return 2
            return run_sql(settings, args[1])
        return run_dbt(settings, args)
    except Exception as error:  # noqa: BLE001 - the CLI boundary: one clear line, not a stack trace
        print(f"cdc-dbt: {error}", file=sys.stderr)
        return 1


def run_dbt(settings: Settings, args: list[str]) -> int:
    from dbt.cli.main import dbtRunner

    from cdc_dbt.recovery import remove_orphaned_table_folders
    from cdc_dbt.session import build_session

    spark = build_session(settings)
    remove_orphaned_table_folders(spark, os.environ.get("CDC_SCHEMA", "cdc"))
    # Models read these through env_var(); resolved here so defaults and overrides agree.
    os.environ["CDC_LANDING_DIR"] = str(settings.landing_dir)
    os.environ["CDC_WAREHOUSE_DIR"] = str(settings.warehouse_dir)
    result = dbtRunner().invoke([*args, *_default_dirs(args, settings)])
    return 0 if result.success else 1


def run_sql(settings: Settings, query: str) -> int:
    from cdc_dbt.session import build_session

    spark = build_session(settings)
    try:
        rows = spark.sql(query).collect()
    except Exception as error:  # noqa: BLE001 - Spark's analysis and runtime errors alike
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"cdc-dbt sql: {message}", file=sys.stderr)
        return 1
    for row in rows:
        sys.stdout.write(json.dumps(row.asDict(recursive=True), default=_json_value, ensure_ascii=False) + "\n")
    return 0


def _default_dirs(args: list[str], settings: Settings) -> list[str]:
    """Point dbt at this project unless the user named other folders."""
    extra = []
    if "--project-dir" not in args:
        extra += ["--project-dir", str(settings.project_dir)]
    if "--profiles-dir" not in args:
        extra += ["--profiles-dir", str(settings.project_dir)]
    return extra


def _json_value(value: Any) -> Any:
    """Spark values JSON has no type for: timestamps as ISO-8601, decimals as exact text."""
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", errors="backslashreplace")
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


if __name__ == "__main__":
    sys.exit(main())
