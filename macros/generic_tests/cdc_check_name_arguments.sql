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
