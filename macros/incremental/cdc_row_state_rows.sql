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
