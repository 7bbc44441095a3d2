{#
    The row each event of `events` leaves behind, for keys whose events do not all carry their
    whole row: a column an event does not know (TOAST's __debezium_unavailable_value) keeps the
    previous value, and a MongoDB patch changes only what it names. Each key's events are folded
    in source order by the cdc_resolve_rows UDF (udfs/row_images.py), once per key; the result
    has the row change columns and `row`, one row per event.
#}
{% macro cdc_events_with_resolved_rows(events) %}
    select
        {{ cdc_dbt.cdc_row_change_columns(event_struct='event') }},
        resolved_rows[event_index] as row
    from (
        select
            source_db,
            source_table,
            row_key,
            resolved_rows,
            posexplode(events) as (event_index, event)
        from (
            select
                *,
                cdc_resolve_rows(events) as resolved_rows
            from (
                select
                    source_db,
                    source_table,
                    row_key,
                    -- Sorted by the struct's first fields: source order.
                    sort_array(
                        collect_list(
                            struct(
                                source_position,
                                `partition`,
                                `offset`,
                                topic,
                                op,
                                after,
                                unavailable_columns,
                                patch,
                                source_ts
                            )
                        )
                    ) as events
                from {{ events }}
                group by source_db, source_table, row_key
            ) as key_event_lists
        ) as key_rows_resolved
    ) as key_events_exploded
{% endmacro %}
