-- Every key's last version, deleted keys included (soft deletes): a live key as cdc_current holds
-- it, a deleted or truncated one with the values it had and when and how it went.
with

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

final as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        valid_from as source_ts,
        not is_current as is_deleted,
        if(is_current, null, valid_to) as deleted_ts,
        if(is_current, null, ended_by) as deleted_by,
        version
    from last_versions
    where version_from_last = 1

)

select * from final
