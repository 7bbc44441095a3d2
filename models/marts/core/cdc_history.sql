-- One row per version, from int_row_events_versioned: on Delta a table into which
-- each build merges the versions of the keys it recomputed; on Parquet a view of each key's
-- newest generation (macros/incremental/cdc_core_table_config.sql).
{{ config(**cdc_core_table_config(row_identity=['source_db', 'source_table', 'row_key', 'source_position', 'op'])) }}

with

row_versions as (

    {{ cdc_row_state_rows(ref('int_row_events_versioned')) }}

),

final as (

    select
        source_db,
        source_table,
        row_key,
        row,
        version,
        valid_from,
        valid_to,
        is_current,
        ended_by,
        op,
        source_position,
        topic,
        `partition`,
        `offset`,
        generation
    from row_versions

)

select * from final
