{#
    Spark's `create or replace view` drops the view and then creates it: a query in between (a
    client of the warm server while a build runs) would find no view. So a build leaves a view
    whose definition has not changed as it is, and replaces only a changed one: the fingerprint
    of the statement that created a view is kept in its table property `cdc_dbt.definition`. The
    statement includes the contract's check, which runs on every build as before.
#}
{% materialization view, adapter='spark' -%}
    {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
    {%- set target_relation = api.Relation.create(
        identifier=model['alias'], schema=schema, database=database, type='view'
    ) -%}
    {%- set definition = local_md5(get_create_view_as_sql(target_relation, sql)) -%}
    {%- if old_relation is not none and old_relation.is_view and not should_full_refresh()
            and cdc_dbt._view_definition(old_relation) == definition -%}
        {{ run_hooks(pre_hooks) }}
        {%- call noop_statement('main', 'OK (unchanged)', 'OK') -%}{%- endcall -%}
        {{ run_hooks(post_hooks) }}
        {{ return({'relations': [target_relation]}) }}
    {%- endif -%}
    {%- set materialized = create_or_replace_view() -%}
    {%- do run_query(
        'alter view ' ~ target_relation ~ " set tblproperties ('cdc_dbt.definition' = '" ~ definition ~ "')"
    ) -%}
    {{ return(materialized) }}
{%- endmaterialization %}

{#- The fingerprint a view was created with (see above), or none. -#}
{% macro _view_definition(relation) %}
    {%- set properties = run_query('show tblproperties ' ~ relation) -%}
    {%- for row in properties.rows if row[0] == 'cdc_dbt.definition' -%}
        {{- return(row[1]) -}}
    {%- endfor -%}
    {{- return(none) -}}
{% endmacro %}
