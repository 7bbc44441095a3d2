{#
    Every delivery of a landed Kafka record, from either landing format: the kcat lines parsed by
    the `cdc_parse_kcat_line` UDF, and the Parquet records. The same record landed twice (two
    files, or both formats) is two rows here; int_records_parsed_unbound keeps it once.

    Incremental: a build reads only the files it has not read before. A file is known by its
    path, size and modification time, so a file that grew (kcat appending to it) is read again
    and its old records count as re-deliveries. The list of files already read is a literal in
    the filter, which Spark applies to the file listing: read files are not opened at all.

    Withheld: the records of the rows `cdc-dbt forget` erased (the erasure list,
    stg_warehouse__erasures), by their identity and by their Kafka key's fingerprint, so that
    no build, incremental or full, parses or keeps them again; a later record with the same
    Kafka key in the same topic is withheld too (docs/commands.md#forgetting-a-row-cdc-dbt-forget).
#}

{%- set files_already_read = cdc_files_already_read() %}

with

erasures as (

    select * from {{ ref('stg_warehouse__erasures') }}

),

kcat_lines as (

    select * from {{ ref('stg_kafka__kcat_lines') }}
    where {{ cdc_is_new_landed_file(files_already_read) }}

),

parquet_records as (

    select * from {{ ref('stg_kafka__parquet_records') }}
    where {{ cdc_is_new_landed_file(files_already_read) }}

),

kcat_lines_parsed as (

    select
        -- Spark's text source does not check UTF-8; text that is not UTF-8 never reaches Python
        -- (the UDF sees every row of its batch whatever a condition around the call says).
        cdc_parse_kcat_line(if(is_valid_utf8(landed_line), landed_line, null)) as record,
        is_valid_utf8(landed_line) as is_utf8,
        landed_line,
        landed_file,
        landed_file_size,
        landed_file_modified_at,
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
        -- kcat writes text: only a line that is not UTF-8 is kept as bytes (its base64).
        false as is_key_base64,
        not is_utf8 as is_payload_base64,
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

    -- By name: each format's columns are picked by the one list (cdc_landed_record_columns).
    select
        {{ cdc_landed_record_columns() }}
    from kcat_records
    union all
    select
        {{ cdc_landed_record_columns() }}
    from parquet_records

),

erased_records as (

    select distinct
        topic,
        `partition`,
        `offset`
    from erasures
    where `offset` is not null

),

erased_kafka_keys as (

    select distinct
        topic,
        kafka_key_sha256
    from erasures
    where kafka_key_sha256 is not null

),

landed_records_not_erased as (

    -- Both small (a forget's records and keys): broadcast, the landed records stay where read.
    select /*+ broadcast(erased_records, erased_kafka_keys) */ landed_records.*
    from landed_records
    left anti join erased_records
        on
            landed_records.topic = erased_records.topic
            and landed_records.`partition` = erased_records.`partition`
            and landed_records.`offset` = erased_records.`offset`
    left anti join erased_kafka_keys
        on
            landed_records.topic = erased_kafka_keys.topic
            and {{ cdc_kafka_key_fingerprint('landed_records.topic', 'landed_records.key') }}
            = erased_kafka_keys.kafka_key_sha256

),

final as (

    select
        {{ cdc_landed_record_columns() }},
        {{ cdc_build_started_at() }} as loaded_at
    from landed_records_not_erased

)

select * from final
