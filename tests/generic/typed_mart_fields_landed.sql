{#
    A typed mart reads fields of the row JSON by name (`meta.cdc_field` in its YAML): a field that
    no landed row of its table ever had (a typo, a column renamed at the source) would give a
    column of nulls and no error. Returns each declared field that `cdc_schema_drift` has never
    seen for the mart's source table and connector. Meant at `severity: warn`: a table that has
    not landed yet has no fields seen either.
#}
{% test typed_mart_fields_landed(model) %}

{#- The graph is empty at parse time: only the refs below matter then. -#}
{%- set marts = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
    | selectattr('alias', 'equalto', model.identifier) | list) if execute else [] -%}
{%- if execute and marts | length != 1 -%}
    {{ exceptions.raise_compiler_error('typed_mart_fields_landed: no single model for ' ~ model) }}
{%- endif -%}
{%- set mart = marts[0] if marts else {'name': '', 'columns': {}, 'config': {'meta': {}}} -%}
{%- set meta = mart.config.meta or {} -%}
{%- set fields = cdc_dbt._declared_row_columns(mart.columns, mart.name) | map(attribute='source') | list -%}

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

)

select declared_fields.field_name
from declared_fields
left anti join landed_fields
    on declared_fields.field_name = landed_fields.field_name

{% endtest %}
