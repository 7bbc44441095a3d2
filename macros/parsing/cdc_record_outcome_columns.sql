{#
    The columns of a record's outcome, from a relation of the landed record's columns, its
    landing reason and detail, and `parsed`, the struct cdc_parse_record or cdc_parse_qlik_record
    returned (udfs/spark.py PARSED_RECORD_TYPE). int_records_parsed_unbound,
    int_qlik_records_bound and int_avro_records_retried write the same columns, and
    int_records_parsed unions them.
#}
{% macro cdc_record_outcome_columns() %}
        topic,
        `partition`,
        `offset`,
        kafka_ts,
        headers,
        key,
        -- A change's payload is left out: its images and fields hold what it said, and at 2.7 KB
        -- (with the converter's schema) it is most of the row. The quarantine and the Qlik binding
        -- read the payloads of the others; int_deliveries_loaded keeps every payload.
        if(parsed.outcome = 'change', null, payload) as payload,
        is_key_base64,
        is_payload_base64,
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
        -- A change the source gives no time (a Qlik full-load REFRESH) is dated by the
        -- connector's clock, else by Kafka's, else by the build that loaded it: history needs a
        -- valid_from for every version.
        coalesce(
            timestamp_millis(parsed.source_ts_ms),
            timestamp_millis(parsed.event_ts_ms),
            if(parsed.outcome = 'change', coalesce(kafka_ts, loaded_at), null)
        ) as source_ts,
        timestamp_millis(parsed.event_ts_ms) as event_ts,
        parsed.position as source_position,
        parsed.source_lsn,
        parsed.source_tx_id,
        parsed.source_snapshot,
        parsed.transaction_id,
        parsed.transaction_total_order,
        parsed.transaction_data_collection_order,
        parsed.transaction_status,
        parsed.transaction_event_count,
        parsed.transaction_collection_counts,
        parsed.qlik_schema_id,
        loaded_at,
        {{ cdc_dbt.cdc_build_started_at() }} as parsed_at
{%- endmacro %}
