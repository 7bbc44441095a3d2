"""cdc-dbt runtime: the `cdc-dbt` command, the Spark session it builds, the demo data generator."""
