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

{%- set rules = cdc_dbt.cdc_column_rule_list(columns, grain, grain_where) %}

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

