{#
    One row per version of a row (SCD type 2): every c, r or u event starts a version; the key's
    next event or its table's next truncate ends it (delete and truncate policies in
    macros/policies/). Events are ordered by source position, never by arrival.

    Incremental: partitioned like int_row_events_sequenced; a build rewrites the buckets that
    int_row_events_sequenced rewrote since, and every bucket when a new truncate arrived.
#}

{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_bucket'],
    )
}}

{%- set is_bucket_to_rebuild = cdc_is_key_bucket_to_rebuild(
    'key_bucket',
    'select key_bucket, max(covered_through) from ' ~ ref('int_row_events_sequenced') ~ ' group by 1',
    'select max(parsed_at) from ' ~ ref('int_records_parsed') ~ " where outcome = 'change' and op = 't'",
) %}

with

row_events as (

    select
        * except (key_bucket, covered_through),
        {{ cdc_key_bucket('source_db', 'source_table', 'row_key') }} as key_bucket
    from {{ ref('int_row_events_sequenced') }}
    where {{ is_bucket_to_rebuild }}

),

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

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

final as (

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
        key_bucket,
        {{ cdc_build_started_at() }} as covered_through
    from versions_ended

)

select * from final
