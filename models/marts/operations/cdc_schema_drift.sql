{#
    Schema drift, as the row images show it: one row per column of each source table and JSON
    type its values take, with when it was first and last seen. A column that appears after the
    table's first event was added (a Debezium schema change, a Qlik table version); a column
    seen with a second type changed type (e.g. integer to decimal); a column no longer in the
    table's latest row images was removed. Nulls show a column is there, not its type.

    Column names come from data and stay values. For a consumer that makes identifiers of them,
    each gets the one Debezium's rule gives (every character other than a letter, digit or
    underscore becomes `_`, and so does a leading digit) and the columns of a table that would
    share one are flagged, never silently merged.

    A view of int_changes_aggregated_to_columns, a few rows per column however many events.
#}

with

columns_aggregated as (

    select * from {{ ref('int_changes_aggregated_to_columns') }}

),

tables as (

    select
        source_db,
        source_table,
        min(first_seen_ts) as table_first_seen_ts,
        max(last_seen_ts) as table_last_seen_ts
    from columns_aggregated
    group by source_db, source_table

),

columns_seen as (

    select
        source_db,
        source_table,
        column_name,
        min(first_seen_ts) as column_first_seen_ts,
        max(last_seen_ts) as column_last_seen_ts
    from columns_aggregated
    group by source_db, source_table, column_name

),

column_identifiers as (

    select
        *,
        regexp_replace(regexp_replace(column_name, '[^A-Za-z0-9_]', '_'), '^[0-9]', '_') as column_identifier
    from columns_seen

),

identifier_collisions as (

    select
        *,
        count(*) over (
            partition by source_db, source_table, column_identifier
        ) > 1 as has_identifier_collision
    from column_identifiers

),

column_types as (

    select
        source_db,
        source_table,
        column_name,
        value_type,
        first_seen_ts,
        last_seen_ts,
        events
    from columns_aggregated
    where value_type is not null

),

ranked_types as (

    select
        *,
        row_number() over (
            partition by source_db, source_table, column_name
            order by first_seen_ts, value_type
        ) as type_number,
        lag(value_type) over (
            partition by source_db, source_table, column_name
            order by first_seen_ts, value_type
        ) as previous_type
    from column_types

),

final as (

    select
        ranked_types.source_db,
        ranked_types.source_table,
        ranked_types.column_name,
        ranked_types.value_type,
        ranked_types.previous_type,
        case
            when ranked_types.type_number > 1 then 'type_changed'
            when columns_seen.column_first_seen_ts > tables.table_first_seen_ts then 'column_added'
            else 'initial'
        end as drift,
        ranked_types.first_seen_ts,
        ranked_types.last_seen_ts,
        ranked_types.events,
        columns_seen.column_last_seen_ts < tables.table_last_seen_ts as is_column_removed,
        columns_seen.column_last_seen_ts,
        columns_seen.column_identifier,
        columns_seen.has_identifier_collision
    from ranked_types
    inner join identifier_collisions as columns_seen
        on
            ranked_types.source_db <=> columns_seen.source_db
            and ranked_types.source_table = columns_seen.source_table
            and ranked_types.column_name = columns_seen.column_name
    inner join tables
        on
            ranked_types.source_db <=> tables.source_db
            and ranked_types.source_table = tables.source_table

)

select * from final
