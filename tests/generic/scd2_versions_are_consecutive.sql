{#
    SCD2 (SPEC §5): the versions of one key are numbered 1, 2, ..., n in sequence order, with no
    gap, no repeat and no null. Fails with one row per offending key.
#}
{% test scd2_versions_are_consecutive(
    model,
    key_columns=['source_db', 'source_table', 'row_key'],
    version_column='version'
) %}

{%- if key_columns is string
    or key_columns is not iterable
    or key_columns is mapping
    or (key_columns | length) == 0 -%}
    {{ exceptions.raise_compiler_error(
        "scd2_versions_are_consecutive: `key_columns` must be a non-empty list of column names, "
        ~ "got " ~ tojson(key_columns)
    ) }}
{%- endif -%}
{%- if version_column is not string or (version_column | trim) == '' -%}
    {{ exceptions.raise_compiler_error(
        "scd2_versions_are_consecutive: `version_column` must be a column name, got "
        ~ tojson(version_column)
    ) }}
{%- endif -%}

{%- set quoted_keys = [] -%}
{%- for column in key_columns -%}
    {%- do quoted_keys.append(cdc_quote_identifier(column)) -%}
{%- endfor -%}
{%- set key_list = quoted_keys | join(', ') -%}
{%- set version = cdc_quote_identifier(version_column) -%}

with

key_summaries as (

    select
        {{ key_list }},
        min({{ version }}) as first_version_number,
        max({{ version }}) as last_version_number,
        count(*) as version_count,
        count(distinct {{ version }}) as distinct_version_count
    from {{ model }}
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
