{#
    The records whose outcome is the quarantine (a Qlik data message held for its
    metadata leaves it once bound, an Avro record held for the Schema Registry once read). The landed file named is the first (by path) of the record's
    deliveries, whichever build read it.
#}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

deliveries as (

    select * from {{ ref('int_deliveries_loaded') }}

),

quarantined_records as (

    select *
    from parsed_records
    where outcome = 'quarantine'

),

first_deliveries as (

    select
        topic,
        `partition`,
        `offset`,
        min(struct(landed_file, landing_format)) as first_delivery
    from deliveries
    group by topic, `partition`, `offset`

),

final as (

    select
        quarantined_records.topic,
        quarantined_records.`partition`,
        quarantined_records.`offset`,
        quarantined_records.key,
        quarantined_records.payload,
        quarantined_records.is_key_base64,
        quarantined_records.is_payload_base64,
        quarantined_records.reason,
        quarantined_records.detail,
        -- A line without an identity is its own record: its file is the one it was read from.
        coalesce(
            first_deliveries.first_delivery.landed_file, quarantined_records.landed_file
        ) as landed_file,
        coalesce(
            first_deliveries.first_delivery.landing_format, quarantined_records.landing_format
        ) as landing_format,
        quarantined_records.kafka_ts
    from quarantined_records
    left join first_deliveries
        on
            quarantined_records.topic = first_deliveries.topic
            and quarantined_records.`partition` = first_deliveries.`partition`
            and quarantined_records.`offset` = first_deliveries.`offset`

)

select * from final
