{#
    How a whole-history aggregate that several readers share is kept (cdc_transactions,
    cdc_schema_drift, int_changes_aggregated_to_source_tables): a table on Delta, computed once per
    build and replaced in one commit, so a reader sees the old table or the new one; a view on
    Parquet, where dbt replaces a table by dropping it and creating it again, and a query in
    between would find none.
#}
{% macro cdc_aggregate_materialization() %}
    {{- return('table' if cdc_dbt.cdc_table_format() == 'delta' else 'view') -}}
{% endmacro %}
