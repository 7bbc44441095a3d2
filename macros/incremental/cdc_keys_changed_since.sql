{#
    A `select` of the keys with a row change (c, r, u or d) in `parsed_records` parsed since
    `generation`: the keys int_row_events_sequenced recomputes.
#}
{% macro cdc_keys_changed_since(parsed_records, generation) %}
    select distinct
        source_db,
        source_table,
        row_key
    from {{ parsed_records }}
    where
        outcome = 'change'
        and op in ('c', 'r', 'u', 'd')
        and {{ cdc_dbt.cdc_parsed_since(generation) }}
{% endmacro %}
