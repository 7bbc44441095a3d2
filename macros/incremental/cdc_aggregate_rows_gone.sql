{#
    When a build computes an aggregate from every record into a table that holds rows: a `union
    all` of the table's rows `recomputed` no longer holds (matched null-safe on `key_columns`), each
    with a null `generation`, which makes the merge delete it; nothing otherwise. `columns`: the
    table's columns but `generation`, named, since a table built before it had `generation` gets
    the column only in this build.
#}
{% macro cdc_aggregate_rows_gone(generation, recomputed, columns, key_columns) %}
    {%- if generation is not none or not cdc_dbt.cdc_reads_this() %}
        {{- return('') -}}
    {%- endif %}
    {%- set selected = [] %}
    {%- for column in columns %}
        {%- do selected.append('built.' ~ column) %}
    {%- endfor %}
    {%- set conditions = [] %}
    {%- for column in key_columns %}
        {%- do conditions.append('built.' ~ column ~ ' <=> ' ~ recomputed ~ '.' ~ column) %}
    {%- endfor %}
    {{- return(
        'union all select ' ~ selected | join(', ') ~ ', cast(null as bigint) as generation'
        ~ ' from ' ~ this ~ ' as built left anti join ' ~ recomputed ~ ' on ' ~ conditions | join(' and ')
    ) -}}
{% endmacro %}
