"""cdc-dbt runtime: the `cdc-dbt` command, the Spark session it builds, its settings.

The demo data generator is the `generator` subpackage, which the runtime never imports.
"""
