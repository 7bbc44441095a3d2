{#
    A typed history mart: cdc_history's versions of one source table as typed columns, declared
    as a current mart is (cdc_typed_current.sql). Option, in `config.meta`:
    `cdc_track_history_columns: [<mart column>, ...]`, or `cdc_track_history_except_columns`: only
    a change of a tracked column makes a new version. Consecutive versions that differ only in
    untracked columns are one, holding the newest untracked values, from the first one's
    `valid_from` to the last one's `valid_to`.
#}
{% macro cdc_typed_history() %}
    {%- set source_table, connector, columns = cdc_dbt._declared_typed_mart() %}
    {{- return(cdc_dbt._typed_history_query(source_table, connector, columns, cdc_dbt._tracked_columns(columns))) }}
{% endmacro %}

{#- The declared columns whose changes make a new version, when an option names them; else none
    (every version of cdc_history is one of the mart). #}
{% macro _tracked_columns(columns) %}
    {%- set meta = (config.get('meta') or {}) if execute else {} %}
    {%- set tracked = meta.get('cdc_track_history_columns') %}
    {%- set untracked = meta.get('cdc_track_history_except_columns') %}
    {%- if tracked is not none and untracked is not none %}
        {{- exceptions.raise_compiler_error(
            'typed mart ' ~ model.name ~ ': set cdc_track_history_columns or cdc_track_history_except_columns, not both'
        ) -}}
    {%- endif %}
    {%- set named = tracked if tracked is not none else (untracked or []) %}
    {%- set declared = columns | map(attribute='name') | list %}
    {%- for name in named if name not in declared %}
        {{- exceptions.raise_compiler_error(
            'typed mart ' ~ model.name ~ ': ' ~ name ~ ' is no column it reads from the row (declared: '
            ~ declared | join(', ') ~ ')'
        ) -}}
    {%- endfor %}
    {%- if tracked is not none %}
        {{- return(columns | selectattr('name', 'in', tracked) | list) }}
    {%- elif untracked is not none %}
        {{- return(columns | rejectattr('name', 'in', untracked) | list) }}
    {%- endif %}
    {{- return(none) }}
{% endmacro %}

{% macro _typed_history_query(source_table, connector, columns, tracked_columns=none) %}
with

history_rows as (

    select history_rows.*
    from {{ ref('cdc_history') }} as history_rows
    {{ cdc_dbt._of_connector('history_rows', source_table, connector) }}

),

parsed as (

    select
        source_db,
        row_key,
        version,
        valid_from,
        valid_to,
        is_current,
        ended_by,
        from_json(row, {{ cdc_dbt.cdc_string_literal(cdc_dbt._row_struct_type(columns)) }}) as row_values
    from history_rows

),

typed as (

    select
        source_db,
        row_key,
        version,
        {{ cdc_dbt._typed_row_columns('row_values', columns) }},
        valid_from,
        valid_to,
        is_current,
        ended_by{% if tracked_columns is not none %},
        struct(
            {%- for column in tracked_columns %}
            row_values.{{ cdc_dbt.cdc_quote_identifier(column.source) }}{{ ',' if not loop.last }}
            {%- endfor %}
        ) as tracked_values{% endif %}
    from parsed

){% if tracked_columns is none %}

select * from typed
{%- else %},

version_starts as (

    {#- A version of the mart starts where a tracked value changed, or where the one before it
        was not ended by an update (a delete or truncate: the key came back). #}
    select
        *,
        coalesce(
            not (
                lag(tracked_values) over key_versions <=> tracked_values
                and lag(ended_by) over key_versions = 'u'
            ),
            true
        ) as is_version_start
    from typed
    window key_versions as (partition by source_db, row_key order by version)

),

tracked_versions as (

    select
        *,
        sum(if(is_version_start, 1, 0)) over (
            partition by source_db, row_key order by version rows between unbounded preceding and current row
        ) as tracked_version
    from version_starts

),

final as (

    select
        source_db,
        row_key,
        cast(tracked_version as int) as version,
        {%- for column in columns %}
        max_by({{ cdc_dbt.cdc_quote_identifier(column.name) }}, version) as {{ cdc_dbt.cdc_quote_identifier(column.name) }},
        {%- endfor %}
        min(valid_from) as valid_from,
        max_by(valid_to, version) as valid_to,
        max_by(is_current, version) as is_current,
        max_by(ended_by, version) as ended_by
    from tracked_versions
    group by source_db, row_key, tracked_version

)

select * from final
{%- endif %}
{% endmacro %}
