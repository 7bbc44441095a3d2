-- Every key's last row, deleted keys included (soft deletes): the live rows are cdc_current's,
-- a deleted or truncated key's is its last version in cdc_history, with when and how it went.
with

current_rows as (

    select * from {{ ref('cdc_current') }}

),

history as (

    select * from {{ ref('cdc_history') }}

),

last_versions as (

    select
        *,
        row_number() over (
            partition by source_db, source_table, row_key order by version desc
        ) as version_from_last
    from history

),

deleted_rows as (

    select * from last_versions
    where version_from_last = 1 and not is_current

),

final as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        false as is_deleted,
        cast(null as timestamp) as deleted_ts,
        cast(null as string) as deleted_by,
        version
    from current_rows
    union all
    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        valid_from as source_ts,
        true as is_deleted,
        valid_to as deleted_ts,
        ended_by as deleted_by,
        version
    from deleted_rows

)

select * from final
