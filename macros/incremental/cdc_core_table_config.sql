{#
    The config() of cdc_current and cdc_history: where the format has MERGE, a table merged on
    `row_identity`, a source row meeting `delete_condition` (on `DBT_INTERNAL_SOURCE`) deleting
    its match; a column the model gains is added to the table (dbt requires a choice where a
    contract is enforced). Else a view over the row-state table.
#}
{% macro cdc_core_table_config(row_identity, delete_condition=none) %}
    {%- if not cdc_dbt.cdc_merges_rows() %}
        {{- return({'materialized': 'view'}) -}}
    {%- endif %}
    {{- return({
        'materialized': 'incremental',
        'incremental_strategy': 'merge',
        'unique_key': row_identity,
        'merge_delete_condition': delete_condition,
        'on_schema_change': 'append_new_columns',
    }) -}}
{% endmacro %}
