{#
    dbt-spark's MERGE (the `merge` incremental strategy), with the model's contract checked on
    every build (dbt-spark checks it only when it creates the table), and two changes the
    row-state and core tables need: the unique key matches null-safe (`<=>`), since some formats
    name no source database; and a model's `merge_delete_condition`, a predicate on
    `DBT_INTERNAL_SOURCE`, makes a source row delete the row it matches (and never be inserted):
    cdc_current drops a key whose row was deleted in the same transaction that updates the others.
#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
    {#- dbt-spark checks a contract when it creates a table; an incremental build is checked here,
        as every build of a view is: the columns this build merges against the YAML's. #}
    {%- if config.get('contract').enforced %}
        {{- get_assert_columns_equivalent('select * from ' ~ source) }}
    {%- endif %}
    {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
    {%- set key_columns = [unique_key] if unique_key is string else unique_key or [] -%}
    {%- for column in key_columns %}
        {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ column ~ ' <=> DBT_INTERNAL_DEST.' ~ column) %}
    {%- endfor %}
    {%- set delete_condition = config.get('merge_delete_condition') -%}
    {%- set update_columns = get_merge_update_columns(
        config.get('merge_update_columns'), config.get('merge_exclude_columns'),
        adapter.get_columns_in_relation(target)
    ) -%}

    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source }} as DBT_INTERNAL_SOURCE
    on {{ predicates | join(' and ') if predicates else 'false' }}
    {%- if delete_condition %}
    when matched and ({{ delete_condition }}) then delete
    {%- endif %}
    when matched then update set
    {%- if update_columns %}
        {%- for column_name in update_columns %}
        {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- else %} *
    {%- endif %}
    when not matched {{- ' and not (' ~ delete_condition ~ ')' if delete_condition }} then insert *
{% endmacro %}
