{#
    Typed marts: the JSON `row` of cdc_current / cdc_history as typed columns, one mart per
    source table. A mart names its source table, the connector that writes it, and its columns; the row JSON
    is parsed once per row with from_json (every scalar field read as text, so numbers keep their
    exact digits) and each field cast to its declared type with try_cast: a value that does not
    fit becomes null in the mart while the raw row stays in cdc_current / cdc_history. A nested
    type (array, struct, map: a MongoDB document's arrays and subdocuments) is read by from_json
    as that type directly, since text cannot be cast to it; a value of another shape is null.
#}

{#
    A typed mart declared once, in its YAML: `config.meta` names the source table
    (`cdc_source_table`) and its connector (`cdc_connector`), and each column that reads the row
    JSON has `data_type` and `meta.cdc_field` (the field it reads). The mart's SQL is one call:
    `{{ cdc_dbt.cdc_typed_current() }}` or `{{ cdc_dbt.cdc_typed_history() }}`. `cdc-dbt scaffold` writes both.
#}
{#
    Two options, in the same `config.meta`:
    - `cdc_keep_deleted: true` (a current mart): deleted keys stay, with their last values,
      `is_deleted` true and `deleted_ts` the delete's (or the truncate's) source time; the YAML
      declares those two columns.
    - `cdc_track_history_columns: [<mart column>, ...]`, or `cdc_track_history_except_columns`
      (a history mart): only a change of a tracked column makes a new version. Consecutive
      versions that differ only in untracked columns are one, holding the newest untracked
      values, from the first one's `valid_from` to the last one's `valid_to`.
#}
{% macro cdc_typed_current() %}
    {#- At parse time the option is not known yet (the YAML is not attached): every current mart
        depends on the view it may read, so that dbt knows the edge whichever it is. #}
    {%- if not execute %}
        {%- do ref('cdc_current_with_deleted') %}
    {%- endif %}
    {%- set source_table, connector, columns = cdc_dbt._declared_typed_mart() %}
    {%- if execute and (config.get('meta') or {}).get('cdc_keep_deleted') %}
        {{- cdc_dbt._require_declared(['is_deleted', 'deleted_ts'], 'cdc_keep_deleted') }}
        {{- return(cdc_dbt.typed_current(source_table, connector, columns, keep_deleted=true)) }}
    {%- endif %}
    {{- return(cdc_dbt.typed_current(source_table, connector, columns)) }}
{% endmacro %}

{% macro cdc_typed_history() %}
    {%- set source_table, connector, columns = cdc_dbt._declared_typed_mart() %}
    {{- return(cdc_dbt.typed_history(source_table, connector, columns, cdc_dbt._tracked_columns(columns))) }}
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

{% macro _require_declared(names, option) %}
    {%- for name in names if name not in model.columns %}
        {{- exceptions.raise_compiler_error(
            'typed mart ' ~ model.name ~ ': ' ~ option ~ ' adds the column ' ~ name ~ ', which its YAML must declare'
        ) -}}
    {%- endfor %}
{% endmacro %}

{% macro _declared_typed_mart() %}
    {#- At parse time the YAML is not attached yet: the refs are what matter then. #}
    {%- if not execute %}
        {{- return(['', '', []]) -}}
    {%- endif %}
    {%- set meta = config.get('meta') or {} %}
    {%- set columns = cdc_dbt._declared_row_columns(model.columns, model.name) %}
    {%- if not meta.get('cdc_source_table') or 'cdc_connector' not in meta or not columns %}
        {{- exceptions.raise_compiler_error(
            'typed mart ' ~ model.name ~ ': its YAML must set config.meta.cdc_source_table,'
            ~ ' config.meta.cdc_connector and, on each column read from the row, data_type and meta.cdc_field'
        ) -}}
    {%- endif %}
    {{- return([meta['cdc_source_table'], meta['cdc_connector'], columns]) -}}
{% endmacro %}

{#- The columns of a model's YAML that read a field of the row JSON, in their order. #}
{% macro _declared_row_columns(yaml_columns, mart_name) %}
    {%- set columns = [] %}
    {%- for column in yaml_columns.values() %}
        {%- set field = (column.get('meta') or {}).get('cdc_field')
            or ((column.get('config') or {}).get('meta') or {}).get('cdc_field') %}
        {%- if field is not none %}
            {%- if not column.get('data_type') %}
                {{- exceptions.raise_compiler_error(
                    'typed mart ' ~ mart_name ~ ': column ' ~ column.name ~ ' reads ' ~ field ~ ' but has no data_type'
                ) -}}
            {%- endif %}
            {%- do columns.append({'source': field, 'name': column.name, 'data_type': column.data_type}) %}
        {%- endif %}
    {%- endfor %}
    {{- return(columns) -}}
{% endmacro %}

{% macro typed_current(source_table, connector, columns, keep_deleted=false) %}
with

current_rows as (

    select current_rows.*
    from {{ ref('cdc_current_with_deleted') if keep_deleted else ref('cdc_current') }} as current_rows
    {{ cdc_dbt._of_connector('current_rows', source_table, connector) }}

),

parsed as (

    select
        source_db,
        row_key,
        op,
        source_ts,{% if keep_deleted %}
        is_deleted,
        deleted_ts,{% endif %}
        from_json(row, {{ cdc_dbt.cdc_string_literal(cdc_dbt._row_struct_type(columns)) }}) as row_values
    from current_rows

),

final as (

    select
        source_db,
        row_key,
        {{ cdc_dbt._typed_row_columns('row_values', columns) }},
        op as last_op,
        source_ts as last_changed_ts{% if keep_deleted %},
        is_deleted,
        deleted_ts{% endif %}
    from parsed

)

select * from final
{% endmacro %}

{% macro typed_history(source_table, connector, columns, tracked_columns=none) %}
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

{% macro _of_connector(rows, source_table, connector) %}
    {#- Only the tables of that name that the connector wrote: the same name can be another
        source's table with other columns. #}
    left semi join {{ ref('int_changes_aggregated_to_source_tables') }} as source_tables
        on
            {{ rows }}.source_db <=> source_tables.source_db
            and {{ rows }}.source_table = source_tables.source_table
            and source_tables.connector <=> {{ 'null' if connector is none else cdc_dbt.cdc_string_literal(connector) }}
    where {{ rows }}.source_table = {{ cdc_dbt.cdc_string_literal(source_table) }}
{% endmacro %}

{% macro _row_struct_type(columns) %}
    {%- set fields = [] -%}
    {%- for column in columns -%}
        {%- set read_as = column.data_type if cdc_dbt._is_nested_type(column.data_type) else 'string' -%}
        {%- do fields.append(cdc_dbt.cdc_quote_identifier(column.source) ~ ': ' ~ read_as) -%}
    {%- endfor -%}
    {{ return('struct<' ~ fields | join(', ') ~ '>') }}
{% endmacro %}

{% macro _typed_row_columns(struct_column, columns) %}
    {%- for column in columns -%}
        {%- set field = struct_column ~ '.' ~ cdc_dbt.cdc_quote_identifier(column.source) %}
        {{ field if cdc_dbt._is_nested_type(column.data_type) else 'try_cast(' ~ field ~ ' as ' ~ column.data_type ~ ')' }}
        as {{ cdc_dbt.cdc_quote_identifier(column.name) }}{{ ',' if not loop.last }}
    {% endfor -%}
{% endmacro %}

{% macro _is_nested_type(data_type) %}
    {{ return(data_type.strip().lower().startswith(('array<', 'struct<', 'map<'))) }}
{% endmacro %}

{#- The typed mart a data test is attached to: its graph node (an empty one at parse time, when
    the graph is empty and only the test's refs matter). #}
{% macro _typed_mart_of_test(model, test_name) %}
    {%- set marts = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('alias', 'equalto', model.identifier) | list) if execute else [] -%}
    {%- if execute and marts | length != 1 -%}
        {{ exceptions.raise_compiler_error(test_name ~ ': no single model for ' ~ model) }}
    {%- endif -%}
    {{- return(marts[0] if marts else {'name': '', 'columns': {}, 'config': {'meta': {}}}) -}}
{% endmacro %}

{#- Two CTEs: `declared_fields`, the row fields a typed mart reads, and `landed_fields`, those
    cdc_schema_drift has seen for its source table and connector. #}
{% macro _declared_and_landed_fields(mart) %}
{%- set meta = mart.config.meta or {} -%}
{%- set fields = cdc_dbt._declared_row_columns(mart.columns, mart.name) | map(attribute='source') | list -%}
declared_fields as (

    select explode(array(
        {%- for field in fields %}{{ cdc_dbt.cdc_string_literal(field) }}{{ ', ' if not loop.last }}{% endfor -%}
    )) as field_name

),

landed_fields as (

    select distinct schema_drift.column_name as field_name
    from {{ ref('cdc_schema_drift') }} as schema_drift
    {{ cdc_dbt._of_connector('schema_drift', meta.get('cdc_source_table', ''), meta.get('cdc_connector', '')) }}

)
{%- endmacro %}
