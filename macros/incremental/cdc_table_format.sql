{#
    What the table format (CDC_TABLE_FORMAT, dbt_project.yml's `file_format`) changes.

    Delta (the default) and Iceberg have MERGE: a row-state table keeps one row per event or
    version of a key, and a build merges the rows of the keys it recomputed into it in one
    transaction; cdc_current and cdc_history are tables merged the same way (on Delta readable
    by path from other engines). Parquet has no MERGE: the row-state tables are merge-on-read
    (generations, cdc_build_generation.sql), and cdc_current and cdc_history are views taking each
    key's newest generation.
#}
{% macro cdc_table_format() %}
    {{- return(env_var('CDC_TABLE_FORMAT', 'delta')) -}}
{% endmacro %}
