{#
    Typed marts: the JSON `row` of cdc_current / cdc_history as typed columns, one mart per
    source table. A mart names its source table, the connector that writes it, and its columns; the row JSON
    is parsed once per row with from_json (every scalar field read as text, so numbers keep their
    exact digits) and each field cast to its declared type with try_cast: a value that does not
    fit becomes null in the mart while the raw row stays in cdc_current / cdc_history. A nested
    type (array, struct, map: a MongoDB document's arrays and subdocuments) is read by from_json
    as that type directly, since text cannot be cast to it; a value of another shape is null.

    A typed mart is declared once, in its YAML: `config.meta` names the source table
    (`cdc_source_table`) and its connector (`cdc_connector`), and each column that reads the row
    JSON has `data_type` and `meta.cdc_field` (the field it reads). The mart's SQL is one call:
    `{{ cdc_dbt.cdc_typed_current() }}` or `{{ cdc_dbt.cdc_typed_history() }}` (cdc_typed_history.sql).
    `cdc-dbt scaffold` writes both.

    Option of a current mart, in the same `config.meta`: `cdc_keep_deleted: true` keeps deleted
    keys, with their last values, `is_deleted` true and `deleted_ts` the delete's (or the
    truncate's) source time; the YAML declares those two columns.
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
        {{- return(cdc_dbt._typed_current_query(source_table, connector, columns, keep_deleted=true)) }}
    {%- endif %}
    {{- return(cdc_dbt._typed_current_query(source_table, connector, columns)) }}
{% endmacro %}

{% macro _require_declared(names, option) %}
    {%- for name in names if name not in model.columns %}
        {{- exceptions.raise_compiler_error(
            'typed mart ' ~ model.name ~ ': ' ~ option ~ ' adds the column ' ~ name ~ ', which its YAML must declare'
        ) -}}
    {%- endfor %}
{% endmacro %}

{% macro _typed_current_query(source_table, connector, columns, keep_deleted=false) %}
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
