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
{% macro cdc_typed_current() %}
    {{ return(cdc_dbt.typed_current(*cdc_dbt._declared_typed_mart())) }}
{% endmacro %}

{% macro cdc_typed_history() %}
    {{ return(cdc_dbt.typed_history(*cdc_dbt._declared_typed_mart())) }}
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

{% macro typed_current(source_table, connector, columns) %}
with

current_rows as (

    select current_rows.*
    from {{ ref('cdc_current') }} as current_rows
    {{ cdc_dbt._of_connector('current_rows', source_table, connector) }}

),

parsed as (

    select
        source_db,
        row_key,
        op,
        source_ts,
        from_json(row, {{ cdc_dbt.cdc_string_literal(cdc_dbt._row_struct_type(columns)) }}) as row_values
    from current_rows

),

final as (

    select
        source_db,
        row_key,
        {{ cdc_dbt._typed_row_columns('row_values', columns) }},
        op as last_op,
        source_ts as last_changed_ts
    from parsed

)

select * from final
{% endmacro %}

{% macro typed_history(source_table, connector, columns) %}
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

final as (

    select
        source_db,
        row_key,
        version,
        {{ cdc_dbt._typed_row_columns('row_values', columns) }},
        valid_from,
        valid_to,
        is_current,
        ended_by
    from parsed

)

select * from final
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
