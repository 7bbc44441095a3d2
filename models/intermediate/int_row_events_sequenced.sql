{#
    One row per row event (c, r, u, d, and tombstones under the tombstone policy) per key, each
    source event once, with the full row it leaves behind.

    - Identity of a row: (source_db, source_table, row_key).
    - The same event delivered twice (same key, source position and op) is kept once.
    - Columns an event does not know (TOAST's __debezium_unavailable_value) keep the previous
      value, and a MongoDB patch (1.x `patch`, 2.x `updateDescription`) changes only what it
      names: a fold over the key's events in source order (cdc_resolve_rows,
      udfs/row_images.py), run only for the keys that need it.

    Incremental: partitioned by key bucket; a build rewrites the buckets with changes parsed
    since it last wrote them (all buckets when new tombstones are deletes: a tombstone finds its
    key only through the change before it).
#}

{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_bucket'],
    )
}}

{%- set key_bucket = cdc_key_bucket('source_db', 'source_table', 'row_key') %}
{%- set is_bucket_to_rebuild = cdc_is_key_bucket_to_rebuild(
    'key_bucket',
    'select ' ~ key_bucket ~ ' as key_bucket, max(parsed_at) from ' ~ ref('int_records_parsed')
    ~ " where outcome = 'change' group by 1",
    "select max(parsed_at) from " ~ ref('int_records_parsed')
    ~ " where ignore_class = 'tombstone' and " ~ var('treat_tombstones_as_deletes', false),
) %}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

row_changes as (

    select
        source_db,
        source_table,
        row_key,
        op,
        after,
        unavailable_columns,
        patch,
        source_ts,
        source_position,
        topic,
        `partition`,
        `offset`
    from parsed_records
    where outcome = 'change' and op in ('c', 'r', 'u', 'd')

),

tombstone_deletes as (

    {{ tombstone_delete_events('parsed_records', 'row_changes') }}

),

row_events as (

    select * from (
        select
            *,
            {{ key_bucket }} as key_bucket
        from (
            select * from row_changes
            union all
            select * from tombstone_deletes
        )
    )
    where {{ is_bucket_to_rebuild }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by source_db, source_table, row_key, source_position, op
            order by topic, `partition`, `offset`
        ) as delivery_number,
        max(coalesce(size(unavailable_columns), 0) > 0 or patch is not null) over (
            partition by source_db, source_table, row_key
        ) as has_unknown_values
    from row_events

),

deduplicated as (

    select * except (delivery_number)
    from ranked
    where delivery_number = 1

),

complete_events as (

    select
        * except (has_unknown_values),
        after as row
    from deduplicated
    where not has_unknown_values

),

key_event_lists as (

    select
        source_db,
        source_table,
        row_key,
        key_bucket,
        sort_array(
            collect_list(
                struct(
                    source_position,
                    `partition`,
                    `offset`,
                    topic,
                    op,
                    after,
                    unavailable_columns,
                    patch,
                    source_ts
                )
            )
        ) as events
    from deduplicated
    where has_unknown_values
    group by source_db, source_table, row_key, key_bucket

),

key_rows_resolved as (

    select
        *,
        cdc_resolve_rows(events) as resolved_rows
    from key_event_lists

),

key_events_exploded as (

    select
        source_db,
        source_table,
        row_key,
        key_bucket,
        resolved_rows,
        posexplode(events) as (event_index, event)
    from key_rows_resolved

),

resolved_events as (

    select
        source_db,
        source_table,
        row_key,
        event.op,
        event.after,
        event.unavailable_columns,
        event.patch,
        event.source_ts,
        event.source_position,
        event.topic,
        event.`partition`,
        event.`offset`,
        key_bucket,
        resolved_rows[event_index] as row
    from key_events_exploded

),

final as (

    select
        *,
        {{ cdc_build_started_at() }} as covered_through
    from (
        select * from complete_events
        union all
        select * from resolved_events
    )

)

select * from final
