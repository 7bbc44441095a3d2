{#
    Every delivery of a landed Kafka record, from either landing format: the kcat lines and the
    Parquet records. The same record landed twice (two files, or both formats) is two rows here;
    int_records_parsed_unbound keeps it once.

    A kcat line is read by Spark's own JSON parser when its shape is one Spark reads exactly as
    the `cdc_parse_kcat_line` UDF does (udfs/landing.py); every other line (headers, an Avro-JSON
    key or payload, a number a double cannot hold, a line that is no record) goes to the UDF,
    which is the judge. docs/landing-formats.md lists the shapes each reads.

    Incremental: a build reads only the files it has not read before. A file is known by its
    path, size and modification time, so a file that grew (kcat appending to it) is read again
    and its old records count as re-deliveries. The list of files already read is a literal in
    the filter, which Spark applies to the file listing: read files are not opened at all.
#}

{%- set files_already_read = cdc_files_already_read() %}

with

kcat_lines as (

    select * from {{ ref('stg_kafka__kcat_lines') }}
    where {{ cdc_is_new_landed_file(files_already_read) }}

),

parquet_records as (

    select * from {{ ref('stg_kafka__parquet_records') }}
    where {{ cdc_is_new_landed_file(files_already_read) }}

),

-- In brackets: Spark's JSON parser stops after the first value of a text, so anything after it
-- would go unseen; in an array it is a second element, or an error.
kcat_lines_read as (

    select
        *,
        is_valid_utf8(landed_line) as is_utf8,
        try_parse_json(
            if(is_valid_utf8(landed_line), concat('[', landed_line, ']'), null)
        ) as line_json
    from kcat_lines

),

kcat_line_members as (

    select
        *,
        variant_get(line_json, '$[0].topic') as topic_json,
        variant_get(line_json, '$[0].partition') as partition_json,
        variant_get(line_json, '$[0].offset') as offset_json,
        variant_get(line_json, '$[0].ts') as ts_json,
        variant_get(line_json, '$[0].key') as key_json,
        variant_get(line_json, '$[0].payload') as payload_json,
        -- A member left out and a JSON null read alike, as the UDF reads them.
        coalesce(schema_of_variant(variant_get(line_json, '$[0].headers')), 'VOID') as headers_type,
        coalesce(schema_of_variant(variant_get(line_json, '$[0].key_error')), 'VOID') as key_error_type,
        coalesce(schema_of_variant(variant_get(line_json, '$[0].payload_error')), 'VOID') as payload_error_type,
        schema_of_variant(line_json) as line_type
    from kcat_lines_read

),

-- The lines Spark reads exactly as the UDF would: one flat JSON object (its members strings,
-- integers, booleans or nulls, so no number that orjson would refuse or round) with a topic, a
-- partition and an offset in Kafka's ranges, text or null key and payload, no headers and no
-- deserialisation error. Spark replaces an unpaired surrogate escape (`\ud800`), which the UDF
-- refuses, so a line with a surrogate escape of any kind goes to the UDF.
kcat_lines_routed as (

    select
        *,
        coalesce(
            variant_get(line_json, '$[1]') is null
            and line_type rlike '^ARRAY<OBJECT<[^<>]*>>$'
            and not line_type rlike 'DECIMAL|DOUBLE|FLOAT'
            and schema_of_variant(topic_json) = 'STRING'
            and try_variant_get(topic_json, '$', 'string') != ''
            and schema_of_variant(partition_json) = 'BIGINT'
            and try_variant_get(partition_json, '$', 'bigint') between 0 and 2147483647
            and schema_of_variant(offset_json) = 'BIGINT'
            and try_variant_get(offset_json, '$', 'bigint') >= 0
            and coalesce(schema_of_variant(key_json), 'VOID') in ('STRING', 'VOID')
            and coalesce(schema_of_variant(payload_json), 'VOID') in ('STRING', 'VOID')
            and headers_type = 'VOID'
            and key_error_type = 'VOID'
            and payload_error_type = 'VOID'
            and not (
                instr(landed_line, '\\u') > 0 and landed_line rlike '\\\\u[dD][89abAB]'
            ),
            false
        ) as is_read_by_spark
    from kcat_line_members

),

kcat_lines_parsed as (

    select
        coalesce(
            if(
                is_read_by_spark,
                named_struct(
                    'topic', try_variant_get(topic_json, '$', 'string'),
                    'partition', try_variant_get(partition_json, '$', 'int'),
                    'offset', try_variant_get(offset_json, '$', 'bigint'),
                    -- Epoch milliseconds Spark's timestamp_millis can hold, as the UDF keeps them
                    -- (udfs/landing.py, MAX_TIMESTAMP_MS).
                    'kafka_ts_ms', if(
                        schema_of_variant(ts_json) = 'BIGINT'
                        and abs(try_variant_get(ts_json, '$', 'decimal(20, 0)')) <= 9223372036854775,
                        try_variant_get(ts_json, '$', 'bigint'),
                        null
                    ),
                    'headers', cast(array() as array<struct<key: string, value: string>>),
                    'key', try_variant_get(key_json, '$', 'string'),
                    'payload', try_variant_get(payload_json, '$', 'string'),
                    'reason', cast(null as string),
                    'detail', cast(null as string)
                ),
                null
            ),
            -- Spark's text source does not check UTF-8; text that is not UTF-8 never reaches
            -- Python, nor does a line read above (the UDF sees every row of its batch whatever a
            -- condition around the call says, so its input is null instead).
            cdc_parse_kcat_line(if(is_utf8 and not is_read_by_spark, landed_line, null))
        ) as record,
        is_utf8,
        landed_line,
        landed_file,
        landed_file_size,
        landed_file_modified_at,
        landing_format
    from kcat_lines_routed

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
        landed_file_size,
        landed_file_modified_at,
        landing_format
    from kcat_lines_parsed

),

landed_records as (

    select * from kcat_records
    union all
    select * from parquet_records

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
        landed_file_size,
        landed_file_modified_at,
        landing_format,
        {{ cdc_build_started_at() }} as loaded_at
    from landed_records

)

select * from final
