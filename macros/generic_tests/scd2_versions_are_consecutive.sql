{#
    SCD2: the versions of one key are numbered 1, 2, ..., n in sequence order, with no gap, no
    repeat and no null. Fails with one row per offending key.
#}
{% test scd2_versions_are_consecutive(
    model,
    key_columns=['source_db', 'source_table', 'row_key'],
    version_column='version',
    generation_column=none
) %}

{%- do cdc_dbt.cdc_check_name_arguments('scd2_versions_are_consecutive', {'version_column': version_column}) -%}

{%- set key_list = cdc_dbt.cdc_quoted_column_list('scd2_versions_are_consecutive', 'key_columns', key_columns) -%}
{%- set version = cdc_dbt.cdc_quote_identifier(version_column) -%}

with

key_summaries as (

    select
        {{ key_list }},
        min({{ version }}) as first_version_number,
        max({{ version }}) as last_version_number,
        count(*) as version_count,
        count(distinct {{ version }}) as distinct_version_count
    from {{ cdc_dbt.cdc_rows_to_check('scd2_versions_are_consecutive', model, generation_column) }}
    group by {{ key_list }}

),

validation_errors as (

    select * from key_summaries
    where
        not (first_version_number <=> 1)
        or not (last_version_number <=> version_count)
        or distinct_version_count != version_count

)

select * from validation_errors

{% endtest %}
