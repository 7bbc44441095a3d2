{#
    Every column rule of a model in one query: `not_null` (always, or where a condition holds) and
    `accepted_values`, the checks of dbt's tests of those names, declared per column under
    `columns`. One aggregate over the model counts the rows breaking each rule, so a model is read
    once however many rules it has: on Spark, a query on a view plans and computes the view again,
    and that fixed cost, not the rows, was most of a build's time with one test per rule.

    As in dbt's own tests, `accepted_values` lets nulls through (a `not_null` rule says whether they
    are allowed) and compares the column with each value as a string literal.

    With `grain` (and `grain_where`), the same query checks the model's grain too, as
    `unique_combination_of_columns` (with `config: where:`) would in a query of its own.
#}
{% test column_rules(model, columns, grain=none, grain_where=none) %}

{%- set rules = cdc_dbt._column_rule_list(columns, grain, grain_where) %}

with

rule_counts as (

    select
        {%- for rule in rules %}
        {{ rule.failing_rows }} as rule_{{ loop.index }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ model }}

),

rule_results as (

    select
        stack(
            {{ rules | length }},
            {%- for rule in rules %}
            {{ cdc_dbt.cdc_string_literal(rule.column) }}, {{ cdc_dbt.cdc_string_literal(rule.name) }}, rule_{{ loop.index }}
            {{- ',' if not loop.last }}
            {%- endfor %}
        ) as (column_name, rule, failing_rows)
    from rule_counts

)

select * from rule_results
where failing_rows > 0

{% endtest %}

{#
    The rules of the test above, each as its column, its name as a failure shows it, and
    `failing_rows`, the aggregate counting the rows that break it: the rules of `columns`, then the
    grain's when `grain` is given. One clear compiler error for a malformed entry.
#}
{% macro _column_rule_list(columns, grain=none, grain_where=none) %}
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
                'failing_rows': 'count_if(' ~ column ~ ' is null and (' ~ not_null ~ '))',
            }) -%}
        {%- elif not_null is sameas true -%}
            {%- do rules.append({
                'column': column_name, 'name': 'not_null', 'failing_rows': 'count_if(' ~ column ~ ' is null)',
            }) -%}
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
                'failing_rows': 'count_if(' ~ column ~ ' is not null and ' ~ column ~ ' not in ('
                    ~ (literals | join(', ')) ~ '))',
            }) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if grain is not none -%}
        {%- do rules.append(cdc_dbt._grain_rule(grain, grain_where)) -%}
    {%- elif grain_where is not none -%}
        {{ exceptions.raise_compiler_error("column_rules: `grain_where` needs a `grain`") }}
    {%- endif -%}
    {{ return(rules) }}
{% endmacro %}

{#
    The grain rule of `column_rules`: no two rows (of those meeting `grain_where`, when given)
    share the values of the `grain` columns. Nulls count as values, as when grouping (dbt-utils'
    `unique_combination_of_columns` treats them so too). Its failing rows are the rows beyond the
    first of each combination.
#}
{% macro _grain_rule(grain, grain_where=none) %}
    {%- set column_list = cdc_dbt.cdc_quoted_column_list('column_rules', 'grain', grain) -%}
    {%- if grain_where is none -%}
        {%- set rows, combination, name = 'count(*)', 'struct(' ~ column_list ~ ')', 'unique combination' -%}
    {%- elif grain_where is string and grain_where | trim -%}
        {%- set rows = 'count_if(' ~ grain_where ~ ')' -%}
        {%- set combination = 'if(' ~ grain_where ~ ', struct(' ~ column_list ~ '), null)' -%}
        {%- set name = 'unique combination where ' ~ grain_where -%}
    {%- else -%}
        {{ exceptions.raise_compiler_error(
            "column_rules: `grain_where` must be a condition (SQL text), got " ~ tojson(grain_where)
        ) }}
    {%- endif -%}
    {{ return({
        'column': grain | join(', '),
        'name': name,
        'failing_rows': rows ~ ' - count(distinct ' ~ combination ~ ')',
    }) }}
{% endmacro %}
