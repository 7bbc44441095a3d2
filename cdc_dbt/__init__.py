"""cdc-dbt runtime: the `cdc-dbt` command, the Spark session it builds, its settings.

The demo and test data generator is not part of it: it is the checkout's top-level `generator`
package, outside the wheel, which the runtime never imports.
"""
