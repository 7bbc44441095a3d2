{#
    Every source table seen in the landed changes, with the connector that wrote it: a table's
    name alone does not say what it is (a MongoDB database `inventory` with a collection
    `customers` and a PostgreSQL table `inventory.customers` share `source_table`).
    A view, though an aggregate: a table would be dropped and created again by every build, and
    a typed mart read in between (through the warm server) would find it missing.
#}

{{ config(materialized='view') }}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

final as (

    select
        source_db,
        source_table,
        source_format,
        connector,
        count(*) as change_count
    from parsed_records
    where outcome = 'change'
    group by source_db, source_table, source_format, connector

)

select * from final
