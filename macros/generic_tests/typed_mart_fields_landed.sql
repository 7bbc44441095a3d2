{#
    A typed mart reads fields of the row JSON by name (`meta.cdc_field` in its YAML): a field that
    no landed row of its table ever had (a typo, a column renamed at the source) would give a
    column of nulls and no error. Returns each declared field that `cdc_schema_drift` has never
    seen for the mart's source table and connector. Meant at `severity: warn`: a table that has
    not landed yet has no fields seen either.
#}
{% test typed_mart_fields_landed(model) %}

{%- set mart = cdc_dbt._typed_mart_of_test(model, 'typed_mart_fields_landed') -%}

with

{{ cdc_dbt._declared_and_landed_fields(mart) }}

select declared_fields.field_name
from declared_fields
left anti join landed_fields
    on declared_fields.field_name = landed_fields.field_name

{% endtest %}
