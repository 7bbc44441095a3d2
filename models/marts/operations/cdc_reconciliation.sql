{#
    Where every landed record went, per topic ("nothing is lost"): each distinct landed
    record is a change in cdc_changes, a row of cdc_quarantine, or one of the counted ignore
    classes. `unaccounted` is what is left: the test on it fails the build when it is not 0.
    Changes and quarantine rows are counted in the marts themselves, so a record lost on the way
    to them shows here.
#}

with

deliveries as (

    select * from {{ ref('int_deliveries_loaded') }}

),

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

changes as (

    select * from {{ ref('cdc_changes') }}

),

quarantined_records as (

    select * from {{ ref('cdc_quarantine') }}

),

landed_per_topic as (

    select
        topic,
        count(*) as landed_deliveries,
        -- A line without an identity is its own record.
        count(distinct `partition`, `offset`)
        + count_if(`partition` is null or `offset` is null) as landed_records
    from deliveries
    group by topic

),

changes_per_topic as (

    select
        topic,
        count(*) as changes
    from changes
    group by topic

),

quarantined_per_topic as (

    select
        topic,
        count(*) as quarantined
    from quarantined_records
    group by topic

),

ignored_per_topic as (

    select
        topic,
        count(*) as ignored,
        count_if(ignore_class = 'tombstone') as tombstones,
        count_if(ignore_class = 'transaction_marker') as transaction_markers,
        count_if(ignore_class = 'logical_decoding_message') as logical_decoding_messages,
        count_if(ignore_class = 'metadata_message') as metadata_messages
    from parsed_records
    where outcome = 'ignored'
    group by topic

),

topics as (

    select topic from landed_per_topic
    union
    select topic from changes_per_topic
    union
    select topic from quarantined_per_topic
    union
    select topic from ignored_per_topic

),

final as (

    select
        topics.topic,
        coalesce(landed_per_topic.landed_deliveries, 0) as landed_deliveries,
        coalesce(landed_per_topic.landed_records, 0) as landed_records,
        coalesce(landed_per_topic.landed_deliveries, 0)
        - coalesce(landed_per_topic.landed_records, 0) as duplicate_deliveries,
        coalesce(changes_per_topic.changes, 0) as changes,
        coalesce(quarantined_per_topic.quarantined, 0) as quarantined,
        coalesce(ignored_per_topic.tombstones, 0) as tombstones,
        coalesce(ignored_per_topic.transaction_markers, 0) as transaction_markers,
        coalesce(ignored_per_topic.logical_decoding_messages, 0) as logical_decoding_messages,
        coalesce(ignored_per_topic.metadata_messages, 0) as metadata_messages,
        coalesce(landed_per_topic.landed_records, 0)
        - coalesce(changes_per_topic.changes, 0)
        - coalesce(quarantined_per_topic.quarantined, 0)
        - coalesce(ignored_per_topic.ignored, 0) as unaccounted
    from topics
    left join landed_per_topic on topics.topic <=> landed_per_topic.topic
    left join changes_per_topic on topics.topic <=> changes_per_topic.topic
    left join quarantined_per_topic on topics.topic <=> quarantined_per_topic.topic
    left join ignored_per_topic on topics.topic <=> ignored_per_topic.topic

)

select * from final
