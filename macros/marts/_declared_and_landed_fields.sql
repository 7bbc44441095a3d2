{#- Two CTEs: `declared_fields`, the row fields a typed mart reads, and `landed_fields`, those
    cdc_schema_drift has seen for its source table and connector. #}
{% macro _declared_and_landed_fields(mart) %}
{%- set meta = mart.config.meta or {} -%}
{%- set fields = cdc_dbt._declared_row_columns(mart.columns, mart.name) | map(attribute='source') | list -%}
declared_fields as (

    select explode(array(
        {%- for field in fields %}{{ cdc_dbt.cdc_string_literal(field) }}{{ ', ' if not loop.last }}{% endfor -%}
    )) as field_name

),

landed_fields as (

    select distinct schema_drift.column_name as field_name
    from {{ ref('cdc_schema_drift') }} as schema_drift
    {{ cdc_dbt._of_connector('schema_drift', meta.get('cdc_source_table', ''), meta.get('cdc_connector', '')) }}

)
{%- endmacro %}
