{#
    Names and paths that come from data or configuration never reach SQL unquoted.
    dbt-spark's adapter.quote wraps a name in backticks but does not escape backticks inside it.
#}
{% macro cdc_quote_identifier(name) %}
    {{ return('`' ~ (name | string).replace('`', '``') ~ '`') }}
{% endmacro %}

{% macro cdc_string_literal(value) %}
    {{ return("'" ~ (value | string).replace('\\', '\\\\').replace("'", "\\'") ~ "'") }}
{% endmacro %}

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

{#
    The check of a generic test's name arguments (a column name, or a marker value): each must be
    a non-empty string, else one clear compiler error naming the test and the argument.
#}
{% macro cdc_check_name_arguments(test_name, arguments, expected='a column name') %}
    {%- for argument_name, argument in arguments.items() -%}
        {%- if argument is not string or (argument | trim) == '' -%}
            {{ exceptions.raise_compiler_error(
                test_name ~ ": `" ~ argument_name ~ "` must be " ~ expected ~ ", got " ~ tojson(argument)
            ) }}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}
