{#
    SPEC §3: a record's identity is (topic, partition, offset) and the same record seen twice
    counts once, whichever file or format carried it. Lines that have no identity (not a kcat
    record at all) are all kept: they go to the quarantine, each one.
#}

with

kcat_lines as (

    select * from {{ ref('stg_kafka__kcat_lines') }}

),

parquet_records as (

    select * from {{ ref('stg_kafka__parquet_records') }}

),

kcat_lines_parsed as (

    select
        cdc_parse_kcat_line(landed_line) as record,
        landed_line,
        landed_file,
        landing_format
    from kcat_lines

),

kcat_records as (

    select
        record.topic,
        record.`partition`,
        record.`offset`,
        timestamp_millis(record.kafka_ts_ms) as kafka_ts,
        record.headers,
        record.key,
        -- A line that is no record keeps its whole text as the payload, for the quarantine.
        if(record.reason = 'invalid_landing_line', landed_line, record.payload) as payload,
        record.reason as landing_reason,
        record.detail as landing_detail,
        landed_file,
        landing_format
    from kcat_lines_parsed

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
