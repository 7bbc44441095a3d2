{#
    One row per version of a row (SCD type 2): every c, r or u event starts a version; the key's
    next event or its table's next truncate ends it (delete and truncate policies in
    macros/policies/). Events are ordered by source position, never by arrival.

    Incremental (like int_row_events_sequenced): a build recomputes the keys whose events have a
    newer generation than this table's newest, and every key of a table with a truncate parsed
    since (truncate policy), and merges their versions (Delta) or writes them as a new
    generation (Parquet).
#}

{{ config(**cdc_row_state_config(row_identity=['source_db', 'source_table', 'row_key', 'source_position', 'op'])) }}

{%- set generation_built_on = cdc_generation_to_build_on() %}
{%- set recomputes_keys_only = generation_built_on is not none %}

with

sequenced_events as (

    select * from {{ ref('int_row_events_sequenced') }}

),

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

{% if recomputes_keys_only %}
keys_to_recompute as (

    -- Keys whose events were recomputed since the generation this build adds to, and every key
    -- of a table truncated since (truncate policy).
    {{ cdc_keys_recomputed_since('sequenced_events', generation_built_on) }}
    union
    {{ keys_of_tables_truncated_since('sequenced_events', 'parsed_records', generation_built_on) }}

),
{% endif %}

row_events as (

    {{ cdc_newest_generation_rows(
        'sequenced_events', keys_to_recompute='keys_to_recompute' if recomputes_keys_only else none
    ) }}

),

events_timed as (

    -- When each event's version starts: its own time, or a later event's when that is earlier
    -- (a Qlik REFRESH is dated when it reached Kafka, after changes made during the full load).
    -- Source order decides the sequence; times only date it, and never run backwards.
    select
        *,
        min(source_ts) over (
            partition by source_db, source_table, row_key
            order by source_position, `partition`, `offset`
            rows between current row and unbounded following
        ) as starts_at
    from row_events

),

events_with_next as (

    select
        *,
        lead(op) over key_order as next_op,
        lead(source_position) over key_order as next_position,
        lead(starts_at) over key_order as next_starts_at
    from events_timed
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

    {{ first_truncate_after('versions_started', 'parsed_records') }}

),

versions_ended as (

    select
        versions_started.*,
        {{ version_ended_by('next_op', 'next_position', 'truncate_cutoffs.truncate_position') }} as ended_by,
        {{ version_valid_to(
            'next_position', 'next_starts_at', 'truncate_cutoffs.truncate_position', 'truncate_cutoffs.truncate_ts',
            'versions_started.starts_at'
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
        starts_at as valid_from,
        valid_to,
        ended_by is null as is_current,
        ended_by,
        source_position,
        topic,
        `partition`,
        `offset`
    from versions_ended

),

final as (

    select
        *,
        {{ cdc_build_generation() }} as generation
    from versions_computed

)

select * from final
