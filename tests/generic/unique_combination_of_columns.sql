{#
    dbt-utils' `unique_combination_of_columns`, the grain test of every model here: no two rows
    share the values of `combination_of_columns`. Unlike dbt-utils, column names are always
    quoted (there is no `quote_columns` switch): several grains here include Kafka's `partition`
    and `offset`, which are keywords in Spark SQL. Nulls group together, as in dbt-utils; a grain
    with nullable columns narrows the test with `config: where:`.
#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

{%- if combination_of_columns is string
    or combination_of_columns is not iterable
    or combination_of_columns is mapping
    or (combination_of_columns | length) == 0 -%}
    {{ exceptions.raise_compiler_error(
        "unique_combination_of_columns: `combination_of_columns` must be a non-empty list of "
        ~ "column names, got " ~ tojson(combination_of_columns)
    ) }}
{%- endif -%}

{%- set quoted_columns = [] -%}
{%- for column in combination_of_columns -%}
    {%- if column is not string or (column | trim) == '' -%}
        {{ exceptions.raise_compiler_error(
            "unique_combination_of_columns: every entry of `combination_of_columns` must be a "
            ~ "column name, got " ~ tojson(column)
        ) }}
    {%- endif -%}
    {%- do quoted_columns.append(cdc_quote_identifier(column)) -%}
{%- endfor -%}
{%- set column_list = quoted_columns | join(', ') -%}

with

validation_errors as (

    select
        {{ column_list }},
        count(*) as row_count
    from {{ model }}
    group by {{ column_list }}
    having count(*) > 1

)

select * from validation_errors

{% endtest %}
