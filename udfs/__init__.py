"""Parsing core of cdc-dbt: pure functions from landed Kafka records to change events.

Nothing in this package except `udfs.spark` imports pyspark; every parser runs, and is tested,
without a JVM.
"""
