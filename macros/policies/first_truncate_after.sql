{#
    Truncate policy (docs/ordering-and-history.md#truncates). A truncate at source position P ends
    every version of its table that an event before P started and that is still open at P. Truncates
    are joined to versions by table and position (never by arrival), so a truncate landing late
    still cuts the versions it should. Returns, for every version, the first truncate (a parsed
    change with op `t`) of its table after it.

    Incrementally, a truncate's table has every key recomputed (keys_of_tables_truncated_since.sql).
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
