{#
    dbt's is_incremental(), false where there is no `this` to read (a dbt unit test). A table of
    another format than the build's (CDC_TABLE_FORMAT changed on a built warehouse) is a compiler
    error saying what to run, rather than a MERGE failing deep in Spark.
#}
{% macro cdc_reads_this() %}
    {%- set reads_this = execute and this is not none and is_incremental() %}
    {%- if reads_this %}
        {%- do cdc_dbt._require_table_format_of_this() %}
    {%- endif %}
    {{- return(reads_this) -}}
{% endmacro %}

{# A compiler error when this model's table is in another format than the build's. #}
{% macro _require_table_format_of_this() %}
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
