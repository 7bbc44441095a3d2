{#
    SCD2: the versions of one key never overlap. Taking each key's versions in `version_column`
    order, version n fails when
    - it ends before it starts (`valid_to` < `valid_from`);
    - it is open (`valid_to` null) although a later version exists;
    - it ends after the next version starts (an overlap);
    - it was replaced (`ended_by` = `replaced_marker`) and its `valid_to` is not exactly the next
      version's `valid_from`, or no next version exists.
    A version ended by a delete or a truncate may leave a gap before the key's next version
    (the row did not exist meanwhile); it must not overlap it.
#}
{% test scd2_versions_do_not_overlap(
    model,
    key_columns=['source_db', 'source_table', 'row_key'],
    version_column='version',
    valid_from_column='valid_from',
    valid_to_column='valid_to',
    ended_by_column='ended_by',
    replaced_marker='u',
    generation_column=none
) %}

{%- do cdc_dbt.cdc_check_name_arguments('scd2_versions_do_not_overlap', {
    'version_column': version_column,
    'valid_from_column': valid_from_column,
    'valid_to_column': valid_to_column,
    'ended_by_column': ended_by_column,
    'replaced_marker': replaced_marker,
}, expected='a non-empty string (a column name, or the marker value)') -%}

{%- set key_list = cdc_dbt.cdc_quoted_column_list('scd2_versions_do_not_overlap', 'key_columns', key_columns) -%}

with

versions as (

    select
        {{ key_list }},
        {{ cdc_dbt.cdc_quote_identifier(version_column) }} as version_number,
        {{ cdc_dbt.cdc_quote_identifier(valid_from_column) }} as version_valid_from,
        {{ cdc_dbt.cdc_quote_identifier(valid_to_column) }} as version_valid_to,
        {{ cdc_dbt.cdc_quote_identifier(ended_by_column) }} as version_ended_by,
        lead({{ cdc_dbt.cdc_quote_identifier(version_column) }}) over key_versions as next_version_number,
        lead({{ cdc_dbt.cdc_quote_identifier(valid_from_column) }}) over key_versions as next_valid_from
    from {{ cdc_dbt.cdc_rows_to_check('scd2_versions_do_not_overlap', model, generation_column) }}
    window key_versions as (
        partition by {{ key_list }}
        order by {{ cdc_dbt.cdc_quote_identifier(version_column) }}
    )

),

checked as (

    select
        *,
        case
            when version_valid_to < version_valid_from
                then 'ends before it starts'
            when next_version_number is not null and version_valid_to is null
                then 'open although a later version exists'
            when next_version_number is not null and version_valid_to > next_valid_from
                then 'overlaps the next version'
            when version_ended_by = {{ cdc_dbt.cdc_string_literal(replaced_marker) }} and next_version_number is null
                then 'replaced, but no later version exists'
            when version_ended_by = {{ cdc_dbt.cdc_string_literal(replaced_marker) }}
                and not (version_valid_to <=> next_valid_from)
                then 'replaced, but valid_to differs from valid_from of the next version'
        end as violation
    from versions

),

validation_errors as (

    select * from checked
    where violation is not null

)

select * from validation_errors

{% endtest %}
