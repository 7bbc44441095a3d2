{#
    The other direction of typed_mart_fields_landed: a field that landed rows of the mart's source
    table have and its YAML does not declare (a column added at the source) reaches cdc_current
    and cdc_history but never the mart. Returns one row per such field, from `cdc_schema_drift`
    (the fields of the landed rows of that table and connector), with the command that adds it.
    Meant at `severity: warn`, on the _current mart only (both marts read the same fields): one
    warning per mart that is behind what landed.
#}
{% test typed_mart_behind_landed(model) %}

{%- set mart = cdc_dbt._typed_mart_of_test(model, 'typed_mart_behind_landed') -%}
{%- set meta = mart.config.meta or {} -%}
{%- set update = 'cdc-dbt scaffold --update ' ~ meta.get('cdc_source_table', '') -%}

with

{{ cdc_dbt._declared_and_landed_fields(mart) }},

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
