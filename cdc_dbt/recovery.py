"""What a build killed half-way leaves behind, cleared before the next build.

Every model writes in one Spark statement, and every incremental model takes what its input holds
and it does not, so a killed build is completed by the next one (docs/incremental-builds.md).
One leftover would stop that: a build killed inside `create table ... as select` (a model's first
build, or `--full-refresh`) can leave the table's folder written and the table not yet in the
metastore. Spark then refuses to create that table again (LOCATION_ALREADY_EXISTS), in every
later build. Such a folder holds nothing a table owns: it is removed.

On Iceberg nothing is: its tables are in its own catalog (the session's default), whose folders
Spark's catalog does not list (its views have folders too), and a create that was killed leaves
files no table's metadata names, which Iceberg never reads.
"""

import sys

from pyspark.sql import SparkSession


def remove_orphaned_table_folders(spark: SparkSession, schema: str) -> list[str]:
    """Remove the folders in `schema`'s location that no table of the catalog owns; return their
    URIs. Folders Spark keeps for itself (names starting with `_` or `.`) stay. Only for tables of
    Spark's own catalog: none where another catalog is the default (Iceberg's)."""
    if spark.conf.get("spark.sql.defaultCatalog") != "spark_catalog":
        return []
    if not spark.catalog.databaseExists(schema):
        return []
    location = spark.sql(f"describe schema `{schema.replace('`', '``')}`").where("info_name = 'Location'").first()
    if location is None:
        return []
    tables = {name.lower() for name in catalog_tables(spark, schema)}
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    schema_path = jvm.org.apache.hadoop.fs.Path(location["info_value"])
    filesystem = schema_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not filesystem.exists(schema_path):
        return []
    removed = []
    for status in filesystem.listStatus(schema_path):
        name = status.getPath().getName()
        if status.isDirectory() and not name.startswith(("_", ".")) and name.lower() not in tables:
            filesystem.delete(status.getPath(), True)
            removed.append(status.getPath().toString())
    for uri in removed:
        print(f"cdc-dbt: removed {uri}, left by a build killed while creating that table", file=sys.stderr)
    return removed


def catalog_tables(spark: SparkSession, schema: str) -> dict[str, str]:
    """Each table and view of `schema` in the current catalog, with its type (MANAGED, EXTERNAL or
    VIEW); no temporary view. By SQL and one lookup per table rather than `spark.catalog.listTables`,
    whose rows Spark decodes by generated code: it fails where expressions are interpreted
    (`spark.sql.codegen.factoryMode=NO_CODEGEN`, as the test suite's session runs)."""
    listed = spark.sql(f"show tables in {quoted(schema)}").where("not isTemporary").collect()
    return {
        row["tableName"]: spark.catalog.getTable(f"{quoted(schema)}.{quoted(row['tableName'])}").tableType
        for row in listed
    }


def quoted(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"
