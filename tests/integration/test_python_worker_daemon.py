"""The embedded Spark runs its Python workers through cdc_dbt.python_worker (docs/operations.md, "Sizing")."""

import zipimport

from pyspark.sql import SparkSession
from pyspark.sql.functions import udf

from cdc_dbt.session import PYTHON_WORKER_DAEMON


def test_python_workers_skip_rereading_unchanged_archives(spark: SparkSession) -> None:
    zip_invalidation_in_worker = udf(lambda _: zipimport.zipimporter.invalidate_caches.__qualname__, "string")
    in_worker = spark.range(1).select(zip_invalidation_in_worker("id")).first()[0]

    assert spark.conf.get("spark.python.daemon.module") == PYTHON_WORKER_DAEMON
    assert in_worker == "skip_unchanged_archives.<locals>.invalidate_if_changed"
