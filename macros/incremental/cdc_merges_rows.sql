{# Whether the table format has MERGE (Delta): then the row-state tables hold no superseded rows. #}
{% macro cdc_merges_rows() %}
    {{- return(cdc_dbt.cdc_table_format() == 'delta') -}}
{% endmacro %}
