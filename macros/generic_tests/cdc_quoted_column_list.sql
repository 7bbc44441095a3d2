{#
    The comma-separated, quoted column list of a generic test's list argument, after checking that
    it is a non-empty list of column names: one clear compiler error otherwise.
#}
{% macro cdc_quoted_column_list(test_name, argument_name, columns) %}
    {%- if columns is string or columns is not iterable or columns is mapping or (columns | length) == 0 -%}
        {{ exceptions.raise_compiler_error(
            test_name ~ ": `" ~ argument_name ~ "` must be a non-empty list of column names, got "
            ~ tojson(columns)
        ) }}
    {%- endif -%}
    {%- set quoted = [] -%}
    {%- for column in columns -%}
        {%- if column is not string or (column | trim) == '' -%}
            {{ exceptions.raise_compiler_error(
                test_name ~ ": every entry of `" ~ argument_name ~ "` must be a column name, got "
                ~ tojson(column)
            ) }}
        {%- endif -%}
        {%- do quoted.append(cdc_dbt.cdc_quote_identifier(column)) -%}
    {%- endfor -%}
    {{ return(quoted | join(', ')) }}
{% endmacro %}
