{#
    The live rows of cdc_current_with_deleted are exactly cdc_current (same keys, rows, op,
    source_ts and version), so a consumer switching to soft deletes loses and gains nothing but
    the deleted keys. Returns every row found on one side and not the other.
#}

with

live_rows as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version
    from {{ ref('cdc_current_with_deleted') }}
    where not is_deleted

),

current_rows as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version
    from {{ ref('cdc_current') }}

),

validation_errors as (

    select
        'a live row of cdc_current_with_deleted that cdc_current lacks' as difference,
        *
    from (select * from live_rows except all select * from current_rows)
    union all
    select
        'a row of cdc_current that cdc_current_with_deleted lacks or calls deleted' as difference,
        *
    from (select * from current_rows except all select * from live_rows)

)

select * from validation_errors
