-- A view: its rows are those of an incremental table, so a build never rewrites it.
{{ config(materialized='view') }}

with

row_versions as (

    select * from {{ ref('int_row_versions') }}

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
