{#
    The config() of a whole-history aggregate that several readers share
    (int_changes_aggregated_to_source_tables, int_changes_aggregated_to_columns). On Delta, a
    table into which each build merges the rows its new records change, in one commit, a source
    row with a null `generation` deleting its match (a row no longer in the aggregate); on Parquet
    a view, since dbt replaces a Parquet table by dropping it and creating it again and a reader
    in between would find none.
#}
{% macro cdc_aggregate_config(unique_key) %}
    {%- if not cdc_dbt.cdc_merges_rows() %}
        {{- return({'materialized': 'view'}) -}}
    {%- endif %}
    {{- return({
        'materialized': 'incremental',
        'incremental_strategy': 'merge',
        'unique_key': unique_key,
        'merge_delete_condition': 'DBT_INTERNAL_SOURCE.generation is null',
        'on_schema_change': 'append_new_columns',
    }) -}}
{% endmacro %}
