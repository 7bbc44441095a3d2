with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

final as (

    select
        topic,
        `partition`,
        `offset`,
        key,
        payload,
        reason,
        detail,
        landed_file,
        landing_format,
        kafka_ts
    from parsed_records
    where outcome = 'quarantine'

)

select * from final
