{# Whether the table format has MERGE (Delta, Iceberg): then the row-state tables hold no superseded rows. #}
{% macro cdc_merges_rows() %}
    {{- return(cdc_dbt.cdc_table_format() in ('delta', 'iceberg')) -}}
{% endmacro %}
