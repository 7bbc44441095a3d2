{#
    Truncate policy (docs/ordering-and-history.md#truncates). A truncate at source position P ends
    every version of its table that an event before P started and that is still open at P. Truncates
    are joined to versions by table and position (never by arrival), so a truncate landing late
    still cuts the versions it should. Returns, for every version, the first truncate (a parsed
    change with op `t`) of its table after it.

    Incrementally, a truncate can end a version of any key of its table, so a build recomputes
    every key of a table truncated since the generation it adds to
    (`keys_of_tables_truncated_since`).
#}
{% macro first_truncate_after(versions, parsed_records) %}
    {{ return(adapter.dispatch('first_truncate_after', 'cdc_dbt')(versions, parsed_records)) }}
{% endmacro %}

{% macro default__first_truncate_after(versions, parsed_records) %}
    select
        version.version_id,
        min(truncate.source_position) as truncate_position,
        min_by(truncate.source_ts, truncate.source_position) as truncate_ts
    from {{ versions }} as version
    inner join (
        select distinct
            source_db,
            source_table,
            source_position,
            source_ts
        from {{ parsed_records }}
        where outcome = 'change' and op = 't'
    ) as truncate
        on
            version.source_db <=> truncate.source_db
            and version.source_table = truncate.source_table
            and truncate.source_position > version.source_position
    group by version.version_id
{% endmacro %}

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
