{#
    Every source table seen in the landed changes, with the connector that wrote it: a table's
    name alone does not say what it is (a MongoDB database `inventory` with a collection
    `customers` and a PostgreSQL table `inventory.customers` share `source_table`).
    Stored on Delta (replaced in one commit), a view on Parquet (where dbt drops and creates a
    table, and a typed mart read in between would find it missing): every read of a typed mart
    and each of its data tests semi-joins it, and as a view each computed it from every parsed record.
#}

{{ config(materialized=cdc_aggregate_materialization()) }}

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
