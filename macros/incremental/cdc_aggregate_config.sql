{#
    The config() of a whole-history aggregate that several readers share
    (int_changes_aggregated_to_source_tables, int_changes_aggregated_to_columns): that of the
    merged core tables (cdc_core_table_config: a table merged in one commit per build on Delta, a
    view on Parquet, since dbt replaces a Parquet table by dropping it and creating it again), a
    source row with a null `generation` deleting its match (a row no longer in the aggregate).
#}
{% macro cdc_aggregate_config(unique_key) %}
    {{- return(cdc_dbt.cdc_core_table_config(unique_key, delete_condition='DBT_INTERNAL_SOURCE.generation is null')) -}}
{% endmacro %}
