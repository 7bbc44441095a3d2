{#
    Every source table seen in the landed changes, with the connector that wrote it: a table's
    name alone does not say what it is (a MongoDB database `inventory` with a collection
    `customers` and a PostgreSQL table `inventory.customers` share `source_table`). Every read of a
    typed mart and each of its data tests semi-joins it.

    On Delta a table to which each build adds the counts of the changes parsed since it last did
    (cdc_aggregate_config), a view on Parquet.
#}

{{ config(**cdc_aggregate_config(unique_key=['source_db', 'source_table', 'source_format', 'connector'])) }}

{%- set generation_built_on = cdc_aggregate_generation_to_build_on(ref('stg_warehouse__erasures')) %}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}
    {%- if generation_built_on is not none %}
    where {{ cdc_parsed_since(generation_built_on) }}
    {%- endif %}

),

new_counts as (

    select
        source_db,
        source_table,
        source_format,
        connector,
        count(*) as change_count
    from parsed_records
    where outcome = 'change'
    group by source_db, source_table, source_format, connector

),

-- The table's rows this build adds to; none when it computes from every record.
built_counts as (

    {{ cdc_aggregate_rows_added_to(generation_built_on, like='new_counts') }}

),

counts as (

    select
        new_counts.source_db,
        new_counts.source_table,
        new_counts.source_format,
        new_counts.connector,
        new_counts.change_count + coalesce(built_counts.change_count, 0) as change_count
    from new_counts
    left join built_counts
        on
            new_counts.source_db <=> built_counts.source_db
            and new_counts.source_table = built_counts.source_table
            and new_counts.source_format = built_counts.source_format
            and new_counts.connector <=> built_counts.connector

),

final as (

    select
        *,
        {{ cdc_build_generation() }} as generation
    from counts
    -- Recomputed from every record: a table no longer seen is deleted.
    {{ cdc_aggregate_rows_gone(
        generation_built_on, 'counts',
        columns=['source_db', 'source_table', 'source_format', 'connector', 'change_count'],
        key_columns=['source_db', 'source_table', 'source_format', 'connector'],
    ) }}

)

select * from final
