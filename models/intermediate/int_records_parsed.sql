{#
    Every landed record, parsed once by the `cdc_parse_record` UDF (udfs/records.py) into one of
    three outcomes: a change, a counted ignore class, or a quarantine reason. Landing problems
    (a line that is no kcat record, bytes that are not text) are quarantined without parsing.
#}

with

landed_records as (

    select * from {{ ref('int_landed_records_deduplicated') }}

),

parsed as (

    select
        *,
        if(
            landing_reason is null,
            cdc_parse_record(key, payload, `partition`, `offset`, topic),
            null
        ) as parsed
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
        landed_file,
        landing_format,
        coalesce(parsed.outcome, 'quarantine') as outcome,
        parsed.ignore_class,
        coalesce(landing_reason, parsed.reason) as reason,
        coalesce(landing_detail, parsed.detail) as detail,
        parsed.source_format,
        parsed.connector,
        parsed.source_db,
        parsed.source_table,
        parsed.op,
        parsed.row_key,
        parsed.before,
        parsed.after,
        parsed.unavailable_columns,
        parsed.patch,
        parsed.changed_columns,
        timestamp_millis(parsed.source_ts_ms) as source_ts,
        timestamp_millis(parsed.event_ts_ms) as event_ts,
        parsed.position as source_position,
        parsed.source_lsn,
        parsed.source_tx_id,
        parsed.source_snapshot,
        parsed.transaction_id,
        parsed.transaction_total_order,
        parsed.transaction_data_collection_order
    from parsed

)

select * from final
