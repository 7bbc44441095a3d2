{#
    Names and paths that come from data or configuration never reach SQL unquoted.
    dbt-spark's adapter.quote wraps a name in backticks but does not escape backticks inside it.
#}
{% macro cdc_quote_identifier(name) %}
    {{ return('`' ~ (name | string).replace('`', '``') ~ '`') }}
{% endmacro %}
