{#
    The landed files an incremental model has read already, each as `path|size|mtime micros`:
    a literal list, so that Spark can skip those files when it lists the folder.
#}
{% macro cdc_files_already_read() %}
    {%- if not cdc_dbt.cdc_reads_this() %}
        {{- return([]) -}}
    {%- endif %}
    {%- set files = run_query(
        'select distinct ' ~ cdc_dbt._landed_file_identity() ~ ' as file_identity from ' ~ this
    ) %}
    {{- return(files.columns[0].values() | list) -}}
{% endmacro %}
