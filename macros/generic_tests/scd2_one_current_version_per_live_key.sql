{#
    SCD2: exactly one version is current for a live key, none for a deleted one. A key is live when
    its last version (highest `version_column`) is open (`valid_to` and `ended_by` both null); then
    that last version, and only it, must be current. A key whose last version was closed (by a
    delete or a truncate) must have no current version at all. Fails with one row per offending key.
#}
{% test scd2_one_current_version_per_live_key(
    model,
    key_columns=['source_db', 'source_table', 'row_key'],
    version_column='version',
    is_current_column='is_current',
    valid_to_column='valid_to',
    ended_by_column='ended_by',
    generation_column=none
) %}

{%- do cdc_dbt.cdc_check_name_arguments('scd2_one_current_version_per_live_key', {
    'version_column': version_column,
    'is_current_column': is_current_column,
    'valid_to_column': valid_to_column,
    'ended_by_column': ended_by_column,
}) -%}

{%- set key_list = cdc_dbt.cdc_quoted_column_list('scd2_one_current_version_per_live_key', 'key_columns', key_columns) -%}

with

versions as (

    select
        {{ key_list }},
        {{ cdc_dbt.cdc_quote_identifier(version_column) }} as version_number,
        {{ cdc_dbt.cdc_quote_identifier(is_current_column) }} as is_current_version,
        (
            {{ cdc_dbt.cdc_quote_identifier(valid_to_column) }} is null
            and {{ cdc_dbt.cdc_quote_identifier(ended_by_column) }} is null
        ) as is_open_version
    from {{ cdc_dbt.cdc_rows_to_check('scd2_one_current_version_per_live_key', model, generation_column) }}

),

key_summaries as (

    select
        {{ key_list }},
        max(version_number) as last_version_number,
        max_by(is_open_version, version_number) as is_last_version_open,
        count_if(is_current_version) as current_version_count,
        max(case when is_current_version then version_number end) as current_version_number
    from versions
    group by {{ key_list }}

),

validation_errors as (

    select * from key_summaries
    where
        (
            is_last_version_open
            and not (current_version_count = 1 and current_version_number = last_version_number)
        )
        or (not is_last_version_open and current_version_count > 0)

)

select * from validation_errors

{% endtest %}
