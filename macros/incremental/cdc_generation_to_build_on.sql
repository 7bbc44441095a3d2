{#
    The newest generation of this model's table, which this build adds to; none when the build
    recomputes every key: a full build, an empty table, or a compaction due (the rows of the
    newer generations reach `compaction_threshold` times those of the oldest).
#}
{% macro cdc_generation_to_build_on() %}
    {%- if not cdc_dbt.cdc_reads_this() %}
        {{- return(none) -}}
    {%- endif %}
    {%- if cdc_dbt.cdc_merges_rows() %}
        {#- A merged table holds no superseded rows: nothing to compact. #}
        {{- return(cdc_dbt.cdc_newest_generation_of_this()) -}}
    {%- endif %}
    {%- set sizes = cdc_dbt._generation_sizes() %}
    {%- if not sizes %}
        {{- return(none) -}}
    {%- endif %}
    {%- set newer_rows = sizes[1:] | map(attribute=1) | sum %}
    {%- if sizes | length > 1 and newer_rows >= sizes[0][1] * var('compaction_threshold') | float %}
        {{- return(none) -}}
    {%- endif %}
    {{- return(sizes[-1][0]) -}}
{% endmacro %}
