{% macro _typed_row_columns(struct_column, columns) %}
    {%- for column in columns -%}
        {%- set field = struct_column ~ '.' ~ cdc_dbt.cdc_quote_identifier(column.source) %}
        {{ field if cdc_dbt._is_nested_type(column.data_type) else 'try_cast(' ~ field ~ ' as ' ~ column.data_type ~ ')' }}
        as {{ cdc_dbt.cdc_quote_identifier(column.name) }}{{ ',' if not loop.last }}
    {% endfor -%}
{% endmacro %}
