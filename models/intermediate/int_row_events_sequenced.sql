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
    since it last wrote them. In those buckets it recomputes the keys with such changes, from all
    their events, and copies the other keys' rows (copy-on-write, as a MERGE would). Rows keep
    `covered_through` of the build that computed them, so int_row_versions knows which keys
    changed. When new tombstones are deletes, whole buckets are recomputed: a tombstone finds its
    key only through the change before it.
#}

{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_bucket'],
    )
}}

{%- set key_bucket = cdc_key_bucket('source_db', 'source_table', 'row_key') %}
{%- set buckets_to_rebuild = cdc_key_buckets_to_rebuild(
    'select ' ~ key_bucket ~ ' as key_bucket, max(parsed_at) from ' ~ ref('int_records_parsed')
    ~ " where outcome = 'change' group by 1",
    "select max(parsed_at) from " ~ ref('int_records_parsed')
    ~ " where ignore_class = 'tombstone' and " ~ var('treat_tombstones_as_deletes', false),
) %}
{%- set recomputes_keys_only = cdc_reads_this() and not var('treat_tombstones_as_deletes', false) %}
{%- set columns = [
    'source_db', 'source_table', 'row_key', 'op', 'after', 'unavailable_columns', 'patch',
    'source_ts', 'source_position', 'topic', '`partition`', '`offset`', 'row', 'key_bucket',
] %}

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

{% if recomputes_keys_only %}
buckets_written as (

    {{ cdc_buckets_written(buckets_to_rebuild) }}

),

keys_to_recompute as (

    -- The keys with a change parsed since their bucket was last written.
    select distinct
        changes.source_db,
        changes.source_table,
        changes.row_key
    from (
        select
            source_db,
            source_table,
            row_key,
            parsed_at,
            {{ key_bucket }} as key_bucket
        from parsed_records
        where outcome = 'change' and op in ('c', 'r', 'u', 'd')
    ) as changes
    left join buckets_written
        on changes.key_bucket = buckets_written.key_bucket
    where
        {{ cdc_is_in_key_buckets('changes.key_bucket', buckets_to_rebuild) }}
        and (
            buckets_written.covered_through is null
            or changes.parsed_at > buckets_written.covered_through
        )

),

rows_kept as (

    {{ cdc_rows_kept('keys_to_recompute', buckets_to_rebuild) }}

),
{% endif %}

all_row_events as (

    select * from row_changes
    union all
    select * from tombstone_deletes

),

row_events as (

    select
        all_row_events.*,
        {{ key_bucket }} as key_bucket
    from all_row_events
    {% if recomputes_keys_only %}
        left semi join keys_to_recompute
            on
                all_row_events.source_db <=> keys_to_recompute.source_db
                and all_row_events.source_table = keys_to_recompute.source_table
                and all_row_events.row_key = keys_to_recompute.row_key
    {% endif %}
    where {{ cdc_is_in_key_buckets(key_bucket, buckets_to_rebuild) }}

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

events_computed as (

    select * from complete_events
    union all
    select * from resolved_events

),

final as (

    select
        {{ columns | join(', ') }},
        {{ cdc_build_started_at() }} as covered_through
    from events_computed
    {% if recomputes_keys_only %}
        union all
        select
            {{ columns | join(', ') }},
            covered_through
        from rows_kept
    {% endif %}

)

select * from final
