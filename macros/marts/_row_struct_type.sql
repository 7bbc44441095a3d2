{% macro _row_struct_type(columns) %}
    {%- set fields = [] -%}
    {%- for column in columns -%}
        {%- set read_as = column.data_type if cdc_dbt._is_nested_type(column.data_type) else 'string' -%}
        {%- do fields.append(cdc_dbt.cdc_quote_identifier(column.source) ~ ': ' ~ read_as) -%}
    {%- endfor -%}
    {{ return('struct<' ~ fields | join(', ') ~ '>') }}
{% endmacro %}
