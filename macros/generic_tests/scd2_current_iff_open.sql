{#
    SCD2: a version is current exactly when it is open, and open means both `valid_to` and
    `ended_by` are null. Fails for every version where `is_current` disagrees with that (a null
    `is_current` disagrees with both), and for a half-closed version: `valid_to` set without
    `ended_by`, or the reverse.
#}
{% test scd2_current_iff_open(
    model,
    is_current_column='is_current',
    valid_to_column='valid_to',
    ended_by_column='ended_by',
    generation_column=none
) %}

{%- do cdc_dbt.cdc_check_name_arguments('scd2_current_iff_open', {
    'is_current_column': is_current_column,
    'valid_to_column': valid_to_column,
    'ended_by_column': ended_by_column,
}) -%}

{%- set is_current = cdc_dbt.cdc_quote_identifier(is_current_column) -%}
{%- set valid_to = cdc_dbt.cdc_quote_identifier(valid_to_column) -%}
{%- set ended_by = cdc_dbt.cdc_quote_identifier(ended_by_column) -%}

with

checked as (

    select
        *,
        case
            when ({{ valid_to }} is null) != ({{ ended_by }} is null)
                then 'half closed: valid_to and ended_by disagree'
            when not ({{ is_current }} <=> ({{ valid_to }} is null and {{ ended_by }} is null))
                then 'is_current disagrees with valid_to and ended_by'
        end as violation
    from {{ cdc_dbt.cdc_rows_to_check('scd2_current_iff_open', model, generation_column) }}

),

validation_errors as (

    select * from checked
    where violation is not null

)

select * from validation_errors

{% endtest %}
