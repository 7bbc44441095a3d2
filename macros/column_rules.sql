{#
    The rules of the `column_rules` test's `columns` argument (tests/generic/column_rules.sql), each
    as its column, its name as a failure shows it, and the condition a row breaking it meets; one
    clear compiler error for a malformed entry.
#}
{% macro cdc_column_rule_list(columns) %}
    {%- if columns is not mapping or (columns | length) == 0 -%}
        {{ exceptions.raise_compiler_error(
            "column_rules: `columns` must map each column name to its rules, got " ~ tojson(columns)
        ) }}
    {%- endif -%}
    {%- set rules = [] -%}
    {%- for column_name, column_rules in columns.items() -%}
        {%- set column = cdc_dbt.cdc_quote_identifier(column_name) -%}
        {%- if column_rules is not mapping or (column_rules | length) == 0
            or column_rules.keys() | reject('in', ['not_null', 'accepted_values']) | list -%}
            {{ exceptions.raise_compiler_error(
                "column_rules: the rules of `" ~ column_name ~ "` must be a mapping of `not_null` (true, or"
                ~ " the condition under which the column is never null) and `accepted_values` (a list), got "
                ~ tojson(column_rules)
            ) }}
        {%- endif -%}
        {%- set not_null = column_rules.get('not_null') -%}
        {%- if not_null is string -%}
            {%- do rules.append({
                'column': column_name,
                'name': 'not_null where ' ~ not_null,
                'breaks': column ~ ' is null and (' ~ not_null ~ ')',
            }) -%}
        {%- elif not_null is sameas true -%}
            {%- do rules.append({'column': column_name, 'name': 'not_null', 'breaks': column ~ ' is null'}) -%}
        {%- elif not_null is not none -%}
            {{ exceptions.raise_compiler_error(
                "column_rules: `not_null` of `" ~ column_name ~ "` must be true or a condition, got " ~ tojson(not_null)
            ) }}
        {%- endif -%}
        {%- set accepted_values = column_rules.get('accepted_values') -%}
        {%- if accepted_values is not none -%}
            {%- if accepted_values is string or accepted_values is mapping or accepted_values is not iterable
                or (accepted_values | length) == 0 -%}
                {{ exceptions.raise_compiler_error(
                    "column_rules: `accepted_values` of `" ~ column_name ~ "` must be a non-empty list, got "
                    ~ tojson(accepted_values)
                ) }}
            {%- endif -%}
            {%- set literals = [] -%}
            {%- for value in accepted_values -%}
                {%- do literals.append(cdc_dbt.cdc_string_literal(value)) -%}
            {%- endfor -%}
            {%- do rules.append({
                'column': column_name,
                'name': 'accepted_values',
                'breaks': column ~ ' is not null and ' ~ column ~ ' not in (' ~ (literals | join(', ')) ~ ')',
            }) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(rules) }}
{% endmacro %}
