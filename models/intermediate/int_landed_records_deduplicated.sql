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
        -- Spark's text source does not check UTF-8; text that is not UTF-8 never reaches Python
        -- (the UDF sees every row of its batch whatever a condition around the call says).
        cdc_parse_kcat_line(if(is_valid_utf8(landed_line), landed_line, null)) as record,
        is_valid_utf8(landed_line) as is_utf8,
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
        -- A line that is no record keeps its whole text as the payload, for the quarantine;
        -- a line that is not UTF-8 keeps its bytes, as base64.
        case
            when not is_utf8 then base64(cast(landed_line as binary))
            when record.reason = 'invalid_landing_line' then landed_line
            else record.payload
        end as payload,
        if(is_utf8, record.reason, 'invalid_encoding') as landing_reason,
        if(
            is_utf8, record.detail, 'the kcat line is not UTF-8 (payload holds its bytes as base64)'
        ) as landing_detail,
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
        ) as delivery_number,
        count(*) over (partition by topic, `partition`, `offset`) as deliveries
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
        landing_format,
        -- Lines without an identity are each their own record, delivered once.
        if(topic is null or `partition` is null or `offset` is null, 1, deliveries) as deliveries
    from ranked
    where delivery_number = 1 or topic is null or `partition` is null or `offset` is null

)

select * from final
