with

source as (

    select * from {{ source('warehouse', 'cdc_erasures') }}

),

final as (

    select
        erasure_id,
        forgotten_ts,
        source_db,
        source_table,
        topic,
        `partition`,
        `offset`,
        kafka_key_sha256,
        source_format,
        transaction_id,
        source_position,
        op,
        source_ts,
        transaction_total_order,
        transaction_event_count
    from source

)

select * from final
