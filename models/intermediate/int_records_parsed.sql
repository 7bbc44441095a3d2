{#
    Every landed record once, parsed by the `cdc_parse_record` UDF (udfs/records.py) into one of
    three outcomes: a change, a counted ignore class, or a quarantine reason. Landing problems
    (a line that is no kcat record, bytes that are not text) are quarantined without parsing.
    Of a record delivered twice, the delivery of the first file by path is kept.

    A Qlik data message names its table and column ordinals only through its metadata message
    (SPEC §4.5), so it is parsed a second time, with that message, by `cdc_parse_qlik_record`:
    - an enveloped data message binds to the metadata message whose `schemaId` equals its
      `messageSchemaId`;
    - a bare data message names no schema: it binds to its topic's metadata when the topic has
      exactly one `schemaId`.
    A data message whose metadata has not landed stays quarantined as `unknown_qlik_schema`.

    Incremental: a build parses the deliveries loaded since the newest one here, minus the records
    already here (a re-delivery, or a build that stopped half-way), and binds the data messages
    still held to the metadata messages known so far. A held message bound later gets a second
    row with a newer `parsed_at`; the newest row of a record is its outcome (cdc_quarantine reads
    it so).
#}

{{
    config(
        materialized='incremental',
        incremental_strategy='append',
    )
}}

with

deliveries as (

    select * from {{ ref('int_landed_deliveries') }}
    where {{ cdc_is_newer_than_this('loaded_at') }}

),

{% if is_incremental() %}
records_already_parsed as (

    select
        topic,
        `partition`,
        `offset`,
        outcome,
        reason,
        ignore_class,
        kafka_ts,
        headers,
        key,
        payload,
        landed_file,
        landing_format,
        loaded_at,
        qlik_schema_id
    from {{ this }}

),
{% endif %}

new_records as (

    select * except (delivery_number)
    from (
        select
            deliveries.*,
            row_number() over (
                partition by deliveries.topic, deliveries.`partition`, deliveries.`offset`
                order by deliveries.landed_file, deliveries.landing_format
            ) as delivery_number
        from deliveries
        {% if is_incremental() %}
            left anti join records_already_parsed
                on
                    deliveries.topic = records_already_parsed.topic
                    and deliveries.`partition` = records_already_parsed.`partition`
                    and deliveries.`offset` = records_already_parsed.`offset`
        {% endif %}
    )
    -- Lines without an identity are each their own record.
    where delivery_number = 1 or topic is null or `partition` is null or `offset` is null

),

records_parsed as (

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
        loaded_at,
        landing_reason,
        landing_detail,
        if(
            landing_reason is null,
            cdc_parse_record(key, payload, `partition`, `offset`, topic),
            null
        ) as parsed
    from new_records

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
    {% if is_incremental() %}
        union all
        select
            qlik_schema_id,
            topic,
            `partition`,
            `offset`,
            payload as metadata_payload
        from records_already_parsed
        where ignore_class = 'metadata_message'
    {% endif %}

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

qlik_records_held as (

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
        loaded_at,
        parsed.qlik_schema_id
    from records_parsed
    where parsed.reason = 'unknown_qlik_schema'
    {% if is_incremental() %}
        union all
        -- Held by an earlier build and not bound since.
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
            loaded_at,
            qlik_schema_id
        from records_already_parsed as held
        where
            reason = 'unknown_qlik_schema'
            and not exists (
                select 1
                from records_already_parsed as bound
                where
                    bound.topic = held.topic
                    and bound.`partition` = held.`partition`
                    and bound.`offset` = held.`offset`
                    and bound.reason is distinct from 'unknown_qlik_schema'
            )
    {% endif %}

),

qlik_records_bound as (

    -- Only the bound rows reach the UDF: a Python UDF sees every row of its batch whatever an
    -- `if` around it says.
    select
        held.topic,
        held.`partition`,
        held.`offset`,
        held.kafka_ts,
        held.headers,
        held.key,
        held.payload,
        held.landed_file,
        held.landing_format,
        held.loaded_at,
        cast(null as string) as landing_reason,
        cast(null as string) as landing_detail,
        cdc_parse_qlik_record(
            held.payload,
            coalesce(by_schema_id.metadata_payload, by_topic.metadata_payload),
            held.`partition`,
            held.`offset`
        ) as parsed
    from qlik_records_held as held
    left join qlik_metadata_by_schema_id as by_schema_id
        on held.qlik_schema_id = by_schema_id.qlik_schema_id
    left join qlik_metadata_by_topic as by_topic
        on held.qlik_schema_id is null and held.topic = by_topic.topic
    where coalesce(by_schema_id.metadata_payload, by_topic.metadata_payload) is not null

),

outcomes as (

    select records_parsed.* from records_parsed
    -- A data message bound in this very build keeps only its bound row.
    left anti join qlik_records_bound
        on
            records_parsed.topic = qlik_records_bound.topic
            and records_parsed.`partition` = qlik_records_bound.`partition`
            and records_parsed.`offset` = qlik_records_bound.`offset`
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
        parsed.qlik_schema_id,
        loaded_at,
        {{ cdc_build_started_at() }} as parsed_at
    from outcomes

)

select * from final
