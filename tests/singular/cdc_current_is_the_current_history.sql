{#
    cdc_current (SCD1) and cdc_history (SCD2) are two views of the same sequence of events, so the
    current state must be exactly the current versions of the history: the same keys, each with
    the same row, op, source_ts (the version's valid_from) and sequence, and no key in one only.
    Returns every row found on one side and not the other (multiset difference, both ways).
#}

with

cdc_current as (

    select * from {{ ref('cdc_current') }}

),

cdc_history as (

    select * from {{ ref('cdc_history') }}

),

current_rows as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version,
        source_position
    from cdc_current

),

current_versions as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        valid_from as source_ts,
        version,
        source_position
    from cdc_history
    where is_current

),

missing_from_current as (

    select * from current_versions
    except all
    select * from current_rows

),

missing_from_history as (

    select * from current_rows
    except all
    select * from current_versions

),

validation_errors as (

    select
        'a current version of cdc_history that cdc_current lacks' as difference,
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version,
        source_position
    from missing_from_current
    union all
    select
        'a row of cdc_current that is no current version of cdc_history' as difference,
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version,
        source_position
    from missing_from_history

)

select * from validation_errors
