-- The current state as of cdc_consistent_point: every row as it was just before the earliest
-- transaction still incomplete started, so no transaction shows in part; cdc_current itself
-- when every transaction landed has landed whole.
with

history as (

    select * from {{ ref('cdc_history') }}

),

consistent_point as (

    select consistent_ts from {{ ref('cdc_consistent_point') }}

),

final as (

    select
        history.source_db,
        history.source_table,
        history.row_key,
        history.row,
        history.op,
        history.valid_from as source_ts,
        history.version,
        consistent_point.consistent_ts
    from history
    cross join consistent_point
    where
        if(
            consistent_point.consistent_ts is null,
            history.is_current,
            history.valid_from < consistent_point.consistent_ts
            and (history.valid_to is null or history.valid_to >= consistent_point.consistent_ts)
        )

)

select * from final
