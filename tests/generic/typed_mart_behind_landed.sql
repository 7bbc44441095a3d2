{#
    The other direction of typed_mart_fields_landed: a field that landed rows of the mart's source
    table have and its YAML does not declare (a column added at the source) reaches cdc_current
    and cdc_history but never the mart. Returns one row per such field, from `cdc_schema_drift`
    (the fields of the landed rows of that table and connector), with the command that adds it.
    Meant at `severity: warn`, on the _current mart only (both marts read the same fields): one
    warning per mart that is behind what landed.
#}
{% test typed_mart_behind_landed(model) %}

{#- The graph is empty at parse time: only the refs below matter then. -#}
{%- set marts = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
    | selectattr('alias', 'equalto', model.identifier) | list) if execute else [] -%}
{%- if execute and marts | length != 1 -%}
    {{ exceptions.raise_compiler_error('typed_mart_behind_landed: no single model for ' ~ model) }}
{%- endif -%}
{%- set mart = marts[0] if marts else {'name': '', 'columns': {}, 'config': {'meta': {}}} -%}
{%- set meta = mart.config.meta or {} -%}
{%- set fields = cdc_dbt._declared_row_columns(mart.columns, mart.name) | map(attribute='source') | list -%}
{%- set update = 'cdc-dbt scaffold --update ' ~ meta.get('cdc_source_table', '') -%}

with

declared_fields as (

    select explode(array(
        {%- for field in fields %}{{ cdc_dbt.cdc_string_literal(field) }}{{ ', ' if not loop.last }}{% endfor -%}
    )) as field_name

),

landed_fields as (

    select distinct schema_drift.column_name as field_name
    from {{ ref('cdc_schema_drift') }} as schema_drift
    {{ cdc_dbt._of_connector('schema_drift', meta.get('cdc_source_table', ''), meta.get('cdc_connector', '')) }}

),

validation_errors as (

    select
        landed_fields.field_name,
        {{ cdc_dbt.cdc_string_literal('landed and not declared in ' ~ mart.name ~ ': run `' ~ update ~ '`') }}
            as message
    from landed_fields
    left anti join declared_fields
        on landed_fields.field_name = declared_fields.field_name

)

select * from validation_errors

{% endtest %}
