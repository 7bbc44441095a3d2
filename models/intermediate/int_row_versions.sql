{#
    One row per version of a row (SCD type 2): every c, r or u event starts a version; the key's
    next event or its table's next truncate ends it (delete and truncate policies in
    macros/policies/). Events are ordered by source position, never by arrival.

    Incremental: partitioned like int_row_events_sequenced; a build rewrites the buckets that
    int_row_events_sequenced rewrote since, and every bucket when a new truncate arrived. In
    those buckets it recomputes the keys whose events were recomputed since, and every key of a
    newly truncated table, and copies the other keys' versions.
#}

{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_bucket'],
    )
}}

{%- set buckets_to_rebuild = cdc_key_buckets_to_rebuild(
    'select key_bucket, max(covered_through) from ' ~ ref('int_row_events_sequenced') ~ ' group by 1',
    'select max(parsed_at) from ' ~ ref('int_records_parsed') ~ " where outcome = 'change' and op = 't'",
) %}
{%- set recomputes_keys_only = cdc_reads_this() %}
{%- set columns = [
    'source_db', 'source_table', 'row_key', 'row', 'op', 'version', 'valid_from', 'valid_to',
    'is_current', 'ended_by', 'source_position', 'topic', '`partition`', '`offset`', 'key_bucket',
] %}

with

sequenced_events as (

    select
        * except (key_bucket),
        {{ cdc_key_bucket('source_db', 'source_table', 'row_key') }} as key_bucket
    from {{ ref('int_row_events_sequenced') }}
    where {{ cdc_is_in_key_buckets('key_bucket', buckets_to_rebuild) }}

),

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

{% if recomputes_keys_only %}
buckets_written as (

    {{ cdc_buckets_written(buckets_to_rebuild) }}

),

tables_truncated as (

    select
        source_db,
        source_table,
        max(parsed_at) as newest_truncate_parsed_at
    from parsed_records
    where outcome = 'change' and op = 't'
    group by source_db, source_table

),

keys_to_recompute as (

    -- Keys whose events were recomputed, or whose table was truncated, since the bucket was
    -- last written.
    select
        key_events.source_db,
        key_events.source_table,
        key_events.row_key
    from (
        select
            source_db,
            source_table,
            row_key,
            key_bucket,
            max(covered_through) as covered_through
        from sequenced_events
        group by source_db, source_table, row_key, key_bucket
    ) as key_events
    left join buckets_written
        on key_events.key_bucket = buckets_written.key_bucket
    left join tables_truncated
        on
            key_events.source_db <=> tables_truncated.source_db
            and key_events.source_table = tables_truncated.source_table
    where
        buckets_written.covered_through is null
        or key_events.covered_through > buckets_written.covered_through
        or tables_truncated.newest_truncate_parsed_at > buckets_written.covered_through

),

versions_kept as (

    {{ cdc_rows_kept('keys_to_recompute', buckets_to_rebuild) }}

),
{% endif %}

row_events as (

    select sequenced_events.* except (covered_through)
    from sequenced_events
    {% if recomputes_keys_only %}
        left semi join keys_to_recompute
            on
                sequenced_events.source_db <=> keys_to_recompute.source_db
                and sequenced_events.source_table = keys_to_recompute.source_table
                and sequenced_events.row_key = keys_to_recompute.row_key
    {% endif %}

),

truncates as (

    select distinct
        source_db,
        source_table,
        source_position,
        source_ts
    from parsed_records
    where outcome = 'change' and op = 't'

),

events_with_next as (

    select
        *,
        lead(op) over key_order as next_op,
        lead(source_position) over key_order as next_position,
        lead(source_ts) over key_order as next_ts
    from row_events
    window key_order as (
        partition by source_db, source_table, row_key
        order by source_position, `partition`, `offset`
    )

),

versions_started as (

    select
        *,
        concat_ws('|', source_db, source_table, row_key, source_position) as version_id
    from events_with_next
    where op != 'd'

),

truncate_cutoffs as (

    {{ first_truncate_after('versions_started', 'truncates') }}

),

versions_ended as (

    select
        versions_started.*,
        {{ version_ended_by('next_op', 'next_position', 'truncate_cutoffs.truncate_position') }} as ended_by,
        {{ version_valid_to(
            'next_position', 'next_ts', 'truncate_cutoffs.truncate_position', 'truncate_cutoffs.truncate_ts'
        ) }} as valid_to
    from versions_started
    left join truncate_cutoffs
        on versions_started.version_id = truncate_cutoffs.version_id

),

versions_computed as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        row_number() over (
            partition by source_db, source_table, row_key
            order by source_position, `partition`, `offset`
        ) as version,
        source_ts as valid_from,
        valid_to,
        ended_by is null as is_current,
        ended_by,
        source_position,
        topic,
        `partition`,
        `offset`,
        key_bucket
    from versions_ended

),

final as (

    -- Every row written is stamped with this build: its bucket holds every input up to now.
    select
        {{ columns | join(', ') }},
        {{ cdc_build_started_at() }} as covered_through
    from versions_computed
    {% if recomputes_keys_only %}
        union all
        select
            {{ columns | join(', ') }},
            {{ cdc_build_started_at() }} as covered_through
        from versions_kept
    {% endif %}

)

select * from final
