-- int_row_events_versioned holds every generation of a key's versions (merge-on-read); the newest
-- is the key's state.

with

row_versions as (

    {{ cdc_newest_generation_rows(ref('int_row_events_versioned')) }}

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
        `offset`
    from row_versions

)

select * from final
