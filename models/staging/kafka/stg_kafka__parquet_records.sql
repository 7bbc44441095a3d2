with

source as (

    select
        *,
        _metadata.file_path as landed_file,
        _metadata.file_size as landed_file_size,
        _metadata.file_modification_time as landed_file_modified_at
    from {{ source('landing', 'kafka_parquet_records') }}

),

decoded as (

    select
        topic,
        `partition`,
        `offset`,
        `timestamp` as kafka_ts,
        transform(
            headers,
            header -> named_struct('key', header.key, 'value', cast(header.value as string))
        ) as headers,
        cast(key as string) as key_text,
        cast(value as string) as value_text,
        key,
        value,
        landed_file,
        landed_file_size,
        landed_file_modified_at
    from source

),

final as (

    select
        topic,
        `partition`,
        `offset`,
        kafka_ts,
        headers,
        -- Bytes that are not UTF-8 text are kept as base64, never replaced or dropped.
        if(is_valid_utf8(key_text), key_text, base64(key)) as key,
        if(is_valid_utf8(value_text), value_text, base64(value)) as payload,
        case
            when not is_valid_utf8(key_text) or not is_valid_utf8(value_text)
                then 'invalid_encoding'
        end as landing_reason,
        case
            when not is_valid_utf8(key_text) or not is_valid_utf8(value_text)
                then 'the key or value is not UTF-8 text; kept here as base64'
        end as landing_detail,
        landed_file,
        landed_file_size,
        landed_file_modified_at,
        'kafka_parquet' as landing_format
    from decoded

)

select * from final
