{#
    dbt-utils' `unique_combination_of_columns`, the grain test of every model here: no two rows
    share the values of `combination_of_columns`. Unlike dbt-utils, column names are always
    quoted (there is no `quote_columns` switch): several grains here include Kafka's `partition`
    and `offset`, which are keywords in Spark SQL. Nulls group together, as in dbt-utils; a grain
    with nullable columns narrows the test with `config: where:`.
#}
{% test unique_combination_of_columns(model, combination_of_columns) %}


{%- set column_list = cdc_dbt.cdc_quoted_column_list(
    'unique_combination_of_columns', 'combination_of_columns', combination_of_columns
) -%}

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
