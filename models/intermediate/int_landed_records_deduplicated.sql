{#
    SPEC §3: a record's identity is (topic, partition, offset) and the same record seen twice
    counts once, whichever file or format carried it. Lines that have no identity (not a kcat
    record at all) are all kept: they go to the quarantine, each one.
#}

with

kcat_records as (

    select * from {{ ref('stg_kafka__kcat_records') }}

),

parquet_records as (

    select * from {{ ref('stg_kafka__parquet_records') }}

),

landed_records as (

    select * from kcat_records
    union all
    select * from parquet_records

),

ranked as (

    select
        *,
        row_number() over (
            partition by topic, `partition`, `offset`
            order by landed_file, landing_format
        ) as delivery_number
    from landed_records

),

final as (

    select
        topic,
        `partition`,
        `offset`,
        kafka_ts,
        headers,
        key,
        payload,
        landing_reason,
        landing_detail,
        landed_file,
        landing_format
    from ranked
    where delivery_number = 1 or topic is null or `partition` is null or `offset` is null

)

select * from final
