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
        -- A Schema Registry's wire format (Avro) starts with a zero magic byte: no text does.
        coalesce(substr(key, 1, 1) = unhex('00'), false) as is_key_wire_format,
        coalesce(substr(value, 1, 1) = unhex('00'), false) as is_value_wire_format,
        key,
        value,
        landed_file,
        landed_file_size,
        landed_file_modified_at
    from source

),

classified as (

    select
        *,
        -- Bytes that are no text are kept as base64, never replaced or dropped: the wire format's
        -- for the parser, other bytes for the quarantine.
        coalesce(is_key_wire_format or not is_valid_utf8(key_text), false) as is_key_base64,
        coalesce(is_value_wire_format or not is_valid_utf8(value_text), false) as is_payload_base64
    from decoded

),

final as (

    select
        topic,
        `partition`,
        `offset`,
        kafka_ts,
        headers,
        if(is_key_base64, base64(key), key_text) as key,
        if(is_payload_base64, base64(value), value_text) as payload,
        is_key_base64,
        is_payload_base64,
        -- Beside a key or value in the wire format, the parser tells bytes that are no text apart.
        case
            when
                (is_key_base64 or is_payload_base64)
                and not (is_key_wire_format or is_value_wire_format)
                then 'invalid_encoding'
        end as landing_reason,
        case
            when
                (is_key_base64 or is_payload_base64)
                and not (is_key_wire_format or is_value_wire_format)
                then 'the key or value is not UTF-8 text; kept here as base64'
        end as landing_detail,
        landed_file,
        landed_file_size,
        landed_file_modified_at,
        'kafka_parquet' as landing_format
    from classified

)

select * from final
