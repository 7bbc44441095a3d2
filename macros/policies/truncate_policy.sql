{#
    Truncate policy (docs/ordering-and-history.md#truncates). A truncate at source position P ends
    every version of its table that an event before P started and that is still open at P. Truncates
    are joined to versions by table and position (never by arrival), so a truncate landing late
    still cuts the versions it should. Returns, for every version, the first truncate of its table
    after it.
#}
{% macro first_truncate_after(versions, truncates) %}
    {{ return(adapter.dispatch('first_truncate_after', 'cdc_dbt')(versions, truncates)) }}
{% endmacro %}

{% macro default__first_truncate_after(versions, truncates) %}
    select
        version.version_id,
        min(truncate.source_position) as truncate_position,
        min_by(truncate.source_ts, truncate.source_position) as truncate_ts
    from {{ versions }} as version
    inner join {{ truncates }} as truncate
        on
            version.source_db <=> truncate.source_db
            and version.source_table = truncate.source_table
            and truncate.source_position > version.source_position
    group by version.version_id
{% endmacro %}
