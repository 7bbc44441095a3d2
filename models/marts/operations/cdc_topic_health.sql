{#
    How each topic is doing, at a glance: how late its changes arrive (the source's commit time
    → the connector's processing time `ts_ms` → the Kafka timestamp), how fresh its newest change
    is, and how many of its records are in the quarantine, by reason.
#}

with

changes as (

    select * from {{ ref('cdc_changes') }}

),

quarantined_records as (

    select * from {{ ref('cdc_quarantine') }}

),

change_lags as (

    select
        topic,
        count(*) as changes,
        max(source_ts) as newest_source_ts,
        max(kafka_ts) as newest_kafka_ts,
        percentile(unix_millis(event_ts) - unix_millis(source_ts), 0.5) as source_to_connector_p50_ms,
        max(unix_millis(event_ts) - unix_millis(source_ts)) as source_to_connector_max_ms,
        percentile(unix_millis(kafka_ts) - unix_millis(event_ts), 0.5) as connector_to_kafka_p50_ms,
        max(unix_millis(kafka_ts) - unix_millis(event_ts)) as connector_to_kafka_max_ms
    from changes
    group by topic

),

quarantine_reasons as (

    select
        topic,
        reason,
        count(*) as records
    from quarantined_records
    group by topic, reason

),

quarantine_per_topic as (

    select
        topic,
        sum(records) as quarantined,
        map_from_entries(sort_array(collect_list(struct(reason, records)))) as quarantined_by_reason
    from quarantine_reasons
    group by topic

),

final as (

    select
        coalesce(change_lags.topic, quarantine_per_topic.topic) as topic,
        coalesce(change_lags.changes, 0) as changes,
        coalesce(quarantine_per_topic.quarantined, 0) as quarantined,
        quarantine_per_topic.quarantined_by_reason,
        change_lags.newest_source_ts,
        change_lags.newest_kafka_ts,
        change_lags.source_to_connector_p50_ms,
        change_lags.source_to_connector_max_ms,
        change_lags.connector_to_kafka_p50_ms,
        change_lags.connector_to_kafka_max_ms
    from change_lags
    full outer join quarantine_per_topic
        on change_lags.topic <=> quarantine_per_topic.topic

)

select * from final
