{#
    Every landed record, parsed once by the `cdc_parse_record` UDF (udfs/records.py) into one of
    three outcomes: a change, a counted ignore class, or a quarantine reason. Landing problems
    (a line that is no kcat record, bytes that are not text) are quarantined without parsing.

    A Qlik data message names its table and column ordinals only through its metadata message
    (SPEC §4.5), so it is parsed a second time, with that message, by `cdc_parse_qlik_record`:
    - an enveloped data message binds to the metadata message whose `schemaId` equals its
      `messageSchemaId`;
    - a bare data message names no schema: it binds to its topic's metadata when the topic has
      exactly one `schemaId`.
    A data message whose metadata has not landed stays quarantined as `unknown_qlik_schema` and
    is bound by the first build that finds its metadata.
#}

with

landed_records as (

    select * from {{ ref('int_landed_records_deduplicated') }}

),

records_parsed as (

    select
        *,
        if(
            landing_reason is null,
            cdc_parse_record(key, payload, `partition`, `offset`, topic),
            null
        ) as parsed
    from landed_records

),

qlik_metadata_messages as (

    select
        parsed.qlik_schema_id,
        topic,
        `partition`,
        `offset`,
        payload as metadata_payload
    from records_parsed
    where parsed.ignore_class = 'metadata_message'

),

qlik_metadata_by_schema_id as (

    -- Replicate republishes a table version's metadata (each task start): any copy will do.
    select
        qlik_schema_id,
        min_by(metadata_payload, struct(topic, `partition`, `offset`)) as metadata_payload
    from qlik_metadata_messages
    group by qlik_schema_id

),

qlik_metadata_by_topic as (

    select
        topic,
        min_by(metadata_payload, struct(`partition`, `offset`)) as metadata_payload
    from qlik_metadata_messages
    group by topic
    having count(distinct qlik_schema_id) = 1

),

bound as (

    select
        records_parsed.*,
        coalesce(
            qlik_metadata_by_schema_id.metadata_payload,
            qlik_metadata_by_topic.metadata_payload
        ) as qlik_metadata_payload
    from records_parsed
    left join qlik_metadata_by_schema_id
        on
            records_parsed.parsed.reason = 'unknown_qlik_schema'
            and records_parsed.parsed.qlik_schema_id = qlik_metadata_by_schema_id.qlik_schema_id
    left join qlik_metadata_by_topic
        on
            records_parsed.parsed.reason = 'unknown_qlik_schema'
            and records_parsed.parsed.qlik_schema_id is null
            and records_parsed.topic = qlik_metadata_by_topic.topic

),

qlik_records_bound as (

    -- Only the bound rows reach the UDF: a Python UDF sees every row of its batch whatever an
    -- `if` around it says, so the other rows take the branch below and never cross to Python.
    select
        * except (parsed),
        cdc_parse_qlik_record(payload, qlik_metadata_payload, `partition`, `offset`) as parsed
    from bound
    where qlik_metadata_payload is not null

),

reparsed as (

    select
        * except (parsed),
        parsed
    from bound
    where qlik_metadata_payload is null
    union all
    select * from qlik_records_bound

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
        -- A change the source gives no time (a Qlik full-load REFRESH) is dated by the
        -- connector's clock, else by Kafka's: history needs a valid_from for every version.
        coalesce(
            timestamp_millis(parsed.source_ts_ms),
            timestamp_millis(parsed.event_ts_ms),
            if(parsed.outcome = 'change', kafka_ts, null)
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
        parsed.qlik_schema_id
    from reparsed

)

select * from final
