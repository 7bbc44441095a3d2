-- The current state that never shows half a transaction: every row as it was just before the
-- earliest transaction not landed whole started (the consistent point), or cdc_current itself
-- when every transaction landed is whole.
with

history as (

    select * from {{ ref('cdc_history') }}

),

transactions as (

    select * from {{ ref('cdc_transactions') }}

),

consistent_point as (

    select min(started_ts) as consistent_ts
    from transactions
    where not is_complete

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
