{#
    Truncate policy, incremental side (docs/ordering-and-history.md#truncates): a truncate can end
    a version of any key of its table, so a build recomputes every key of a table truncated since
    the generation it adds to, whether or not the key has new events.
#}
{% macro keys_of_tables_truncated_since(events, parsed_records, generation_built_on) %}
    {{ return(adapter.dispatch('keys_of_tables_truncated_since', 'cdc_dbt')(events, parsed_records, generation_built_on)) }}
{% endmacro %}

{% macro default__keys_of_tables_truncated_since(events, parsed_records, generation_built_on) %}
    select
        {{ events }}.source_db,
        {{ events }}.source_table,
        {{ events }}.row_key
    from {{ events }}
    inner join (
        select distinct
            source_db,
            source_table
        from {{ parsed_records }}
        where
            outcome = 'change'
            and op = 't'
            and {{ cdc_dbt.cdc_parsed_since(generation_built_on) }}
    ) as tables_truncated
        on
            {{ events }}.source_db <=> tables_truncated.source_db
            and {{ events }}.source_table = tables_truncated.source_table
{% endmacro %}
