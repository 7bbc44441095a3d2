"""A build killed inside `create table ... as select` leaves the table's folder without the table;
the next build must still be able to create it."""

from pathlib import Path

import pytest
from pyspark.errors import SparkRuntimeException
from pyspark.sql import SparkSession

from cdc_dbt.recovery import remove_orphaned_table_folders


def test_orphaned_table_folders_are_removed_and_owned_ones_kept(spark: SparkSession) -> None:
    spark.sql("create schema if not exists recovery")
    spark.sql("create table recovery.kept using parquet as select 1 as id")
    location = spark.sql("describe schema recovery").where("info_name = 'Location'").first()
    assert location is not None
    schema_dir = Path(location["info_value"].removeprefix("file:"))
    orphan = schema_dir / "half_written"
    orphan.mkdir()
    (orphan / "part-00000.parquet").write_bytes(b"cut short")
    (schema_dir / "_spark_metadata").mkdir()
    with pytest.raises(SparkRuntimeException, match="LOCATION_ALREADY_EXISTS"):
        spark.sql("create table recovery.half_written using parquet as select 2 as id")

    removed = remove_orphaned_table_folders(spark, "recovery")

    assert [uri.rsplit("/", 1)[-1] for uri in removed] == ["half_written"]
    spark.sql("create table recovery.half_written using parquet as select 2 as id")
    assert spark.sql("select id from recovery.half_written").collect()[0]["id"] == 2
    assert spark.sql("select id from recovery.kept").collect()[0]["id"] == 1
    assert (schema_dir / "_spark_metadata").is_dir()
    assert remove_orphaned_table_folders(spark, "no_such_schema") == []
