{#
    What the table format (CDC_TABLE_FORMAT, dbt_project.yml's `file_format`) changes.

    Delta (the default) has MERGE: a row-state table keeps one row per event or
    version of a key, and a build merges the rows of the keys it recomputed into it in one
    transaction; cdc_current and cdc_history are tables merged the same way, readable by path
    from other engines. Parquet has no MERGE: the row-state tables are merge-on-read (generations,
    incremental_state.sql), and cdc_current and cdc_history are views taking each key's newest
    generation.
#}

{% macro cdc_table_format() %}
    {{- return(env_var('CDC_TABLE_FORMAT', 'delta')) -}}
{% endmacro %}

{# Whether the table format has MERGE (Delta): then the row-state tables hold no superseded rows. #}
{% macro cdc_merges_rows() %}
    {{- return(cdc_dbt.cdc_table_format() == 'delta') -}}
{% endmacro %}

{#
    The config() of a row-state model (int_row_events_sequenced, int_row_events_versioned):
    merged on `row_identity` (the columns naming one of its rows) where the format has MERGE,
    else a new `generation` partition per build.
#}
{% macro cdc_row_state_config(row_identity) %}
    {%- if cdc_dbt.cdc_merges_rows() %}
        {{- return({'incremental_strategy': 'merge', 'unique_key': row_identity}) -}}
    {%- endif %}
    {{- return({
        'incremental_strategy': 'insert_overwrite',
        'partition_by': ['generation'],
        'post_hook': '{{ cdc_drop_superseded_generations() }}',
    }) -}}
{% endmacro %}

{#
    The config() of cdc_current and cdc_history: where the format has MERGE, a table merged on
    `row_identity`, a source row meeting `delete_condition` (on `DBT_INTERNAL_SOURCE`) deleting
    its match; a column the model gains is added to the table (dbt requires a choice where a
    contract is enforced). Else a view over the row-state table.
#}
{% macro cdc_core_table_config(row_identity, delete_condition=none) %}
    {%- if not cdc_dbt.cdc_merges_rows() %}
        {{- return({'materialized': 'view'}) -}}
    {%- endif %}
    {{- return({
        'materialized': 'incremental',
        'incremental_strategy': 'merge',
        'unique_key': row_identity,
        'merge_delete_condition': delete_condition,
        'on_schema_change': 'append_new_columns',
    }) -}}
{% endmacro %}

{#
    A `select` of the rows of the row-state table `relation` that a core model (cdc_current,
    cdc_history) reads: on a format with MERGE, every row on a full build, else the rows of the
    keys recomputed since this model's newest generation (one query finds it first); on Parquet,
    each key's newest generation.
#}
{% macro cdc_row_state_rows(relation) %}
    {%- if not cdc_dbt.cdc_merges_rows() %}
        {{- return(cdc_dbt.cdc_newest_generation_rows(relation)) -}}
    {%- endif %}
    {%- set generation_held = cdc_dbt.cdc_newest_generation_of_this() if cdc_dbt.cdc_reads_this() else none %}
    {{- return(
        'select * from ' ~ relation
        ~ ('' if generation_held is none else ' where generation > ' ~ generation_held)
    ) -}}
{% endmacro %}

{# The newest generation in this model's table; none while it is empty. #}
{% macro cdc_newest_generation_of_this() %}
    {{- return(run_query('select max(generation) from ' ~ this).columns[0].values()[0]) -}}
{% endmacro %}

{# A compiler error when this model's table is in another format than the build's. #}
{% macro cdc_require_table_format_of_this() %}
    {%- set existing = load_relation(this) %}
    {%- if existing is none or existing.is_view %}
        {{- return(none) -}}
    {%- endif %}
    {%- set held = 'delta' if existing.is_delta else ('iceberg' if existing.is_iceberg else 'parquet') %}
    {%- if held != cdc_dbt.cdc_table_format() %}
        {{- exceptions.raise_compiler_error(
            this ~ ' is a ' ~ held ~ ' table and this build writes ' ~ cdc_dbt.cdc_table_format()
            ~ ' (CDC_TABLE_FORMAT): rebuild the warehouse in the new format with `cdc-dbt build --full-refresh`,'
            ~ ' or point CDC_WAREHOUSE_DIR at another folder'
        ) -}}
    {%- endif %}
{% endmacro %}
