with

source as (

    select
        value as landed_line,
        _metadata.file_path as landed_file
    from {{ source('landing', 'kcat_json_lines') }}

),

parsed as (

    select
        cdc_parse_kcat_line(landed_line) as record,
        landed_line,
        landed_file
    from source
    -- kcat ends files with a newline; blank lines carry no record.
    where trim(landed_line) != ''

),

final as (

    select
        record.topic,
        record.`partition`,
        record.`offset`,
        timestamp_millis(record.kafka_ts_ms) as kafka_ts,
        record.headers,
        record.key,
        coalesce(record.payload, if(record.reason = 'invalid_landing_line', landed_line, null)) as payload,
        record.reason as landing_reason,
        record.detail as landing_detail,
        landed_file,
        'kcat_json' as landing_format
    from parsed

)

select * from final
