-- The newest source time before which every transaction has landed whole: the start of the
-- earliest transaction still incomplete, or null when none is.
with

transactions as (

    select * from {{ ref('cdc_transactions') }}

),

incomplete_transactions as (

    select
        source_format,
        transaction_id,
        started_ts
    from transactions
    where not is_complete

),

final as (

    select
        min(started_ts) as consistent_ts,
        count(*) as incomplete_transactions,
        min_by(transaction_id, started_ts) as earliest_incomplete_transaction_id
    from incomplete_transactions

)

select * from final
