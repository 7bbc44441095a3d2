with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

final as (

    select
        source_format,
        connector,
        source_table,
        source_db,
        op,
        row_key,
        after,
        before,
        changed_columns,
        unavailable_columns,
        patch,
        source_ts,
        event_ts,
        source_position,
        source_lsn,
        source_tx_id,
        source_snapshot,
        transaction_id,
        transaction_total_order,
        transaction_data_collection_order,
        topic,
        `partition`,
        `offset`,
        kafka_ts
    from parsed_records
    where outcome = 'change'

)

select * from final
