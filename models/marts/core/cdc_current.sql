-- The current versions of int_row_events_versioned: on Delta a table into which each
-- build merges the keys it recomputed, deleting those left with no current version; on Parquet a
-- view of each key's newest generation (macros/incremental/cdc_core_table_config.sql).
{{ config(**cdc_core_table_config(
    row_identity=['source_db', 'source_table', 'row_key'],
    delete_condition='DBT_INTERNAL_SOURCE.row is null',
)) }}

{%- set merges_into_this = cdc_merges_rows() and cdc_reads_this() %}

with

row_versions as (

    {{ cdc_row_state_rows(ref('int_row_events_versioned')) }}

),

current_rows as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        valid_from as source_ts,
        version,
        source_position,
        topic,
        `partition`,
        `offset`,
        generation
    from row_versions
    where is_current

),

{% if merges_into_this %}
rows_ended as (

    -- Keys recomputed with no current version left (deleted, truncated): a row with a null `row`
    -- makes the merge delete the key's row.
    select
        source_db,
        source_table,
        row_key,
        cast(null as string) as row,
        cast(null as string) as op,
        cast(null as timestamp) as source_ts,
        cast(null as int) as version,
        cast(null as string) as source_position,
        cast(null as string) as topic,
        cast(null as int) as `partition`,
        cast(null as bigint) as `offset`,
        max(generation) as generation
    from row_versions
    group by source_db, source_table, row_key
    having not max(is_current)

),
{% endif %}

final as (

    select * from current_rows
    {% if merges_into_this %}
    union all
    select * from rows_ended
    {% endif %}

)

select * from final
