{#
    The columns the row images hold: one row per source table, column and JSON type its values
    take (null for null values), with the source times of the first and last event whose row holds
    it so and how many do. cdc_schema_drift reads its drift from these counts.

    On Delta a table to which each build adds the row images parsed since it last did
    (cdc_aggregate_config): the earliest first, the latest last, the counts summed. A view on Parquet.
#}

{{ config(**cdc_aggregate_config(unique_key=['source_db', 'source_table', 'column_name', 'value_type'])) }}

{%- set generation_built_on = cdc_aggregate_generation_to_build_on(ref('stg_warehouse__erasures')) %}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}
    {%- if generation_built_on is not none %}
    where {{ cdc_parsed_since(generation_built_on) }}
    {%- endif %}

),

changes as (

    select
        source_db,
        source_table,
        source_ts,
        after
    from parsed_records
    where outcome = 'change' and after is not null

),

fields as (

    select
        changes.source_db,
        changes.source_table,
        changes.source_ts,
        field.key as column_name,
        case regexp_extract(schema_of_variant(field.value), '^[A-Z]+', 0)
            when 'VOID' then null
            when 'BIGINT' then 'integer'
            when 'DECIMAL' then 'decimal'
            when 'DOUBLE' then 'decimal'
            when 'FLOAT' then 'decimal'
            when 'STRING' then 'string'
            when 'BOOLEAN' then 'boolean'
            when 'OBJECT' then 'object'
            when 'ARRAY' then 'array'
            else lower(schema_of_variant(field.value))
        end as value_type
    from changes,
        lateral variant_explode(try_parse_json(changes.after)) as field

),

new_columns as (

    select
        source_db,
        source_table,
        column_name,
        value_type,
        min(source_ts) as first_seen_ts,
        max(source_ts) as last_seen_ts,
        count(*) as events
    from fields
    group by source_db, source_table, column_name, value_type

),

-- The table's rows this build adds to; none when it computes from every record.
built_columns as (

    {{ cdc_aggregate_rows_added_to(generation_built_on, like='new_columns') }}

),

columns_seen as (

    select
        new_columns.source_db,
        new_columns.source_table,
        new_columns.column_name,
        new_columns.value_type,
        least(new_columns.first_seen_ts, built_columns.first_seen_ts) as first_seen_ts,
        greatest(new_columns.last_seen_ts, built_columns.last_seen_ts) as last_seen_ts,
        new_columns.events + coalesce(built_columns.events, 0) as events
    from new_columns
    left join built_columns
        on
            new_columns.source_db <=> built_columns.source_db
            and new_columns.source_table = built_columns.source_table
            and new_columns.column_name = built_columns.column_name
            and new_columns.value_type <=> built_columns.value_type

),

final as (

    select
        *,
        {{ cdc_build_generation() }} as generation
    from columns_seen
    -- Recomputed from every record: a column or type no longer seen is deleted.
    {{ cdc_aggregate_rows_gone(
        generation_built_on, 'columns_seen',
        columns=['source_db', 'source_table', 'column_name', 'value_type', 'first_seen_ts', 'last_seen_ts', 'events'],
        key_columns=['source_db', 'source_table', 'column_name', 'value_type'],
    ) }}

)

select * from final
