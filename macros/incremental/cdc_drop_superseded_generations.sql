{#
    Post-hook of the row-state models: once this build's generation holds every key of the older
    generations (a compaction, or a recompute of every key), the older ones are only superseded
    rows, and are dropped. Counting rows first keeps the check off ordinary builds: a generation
    smaller than the oldest cannot hold all of its keys' rows, since a key's rows only grow.
    A build killed before the drop leaves superseded rows that readers skip and the next
    compaction drops.
#}
{% macro cdc_drop_superseded_generations() %}
    {%- if not execute %}
        {{- return('') -}}
    {%- endif %}
    {%- set generation = cdc_dbt.cdc_build_generation() %}
    {%- set sizes = cdc_dbt._generation_sizes() %}
    {#- This build's generation is the newest, unless it wrote nothing. #}
    {%- if not sizes or sizes[-1][0] != generation %}
        {{- return('') -}}
    {%- endif %}
    {%- set older, written = sizes[:-1], sizes[-1][1] %}
    {%- if not older or written < older[0][1] %}
        {{- return('') -}}
    {%- endif %}
    {%- set keys_left_behind = run_query(
        'select count(*) from (select distinct source_db, source_table, row_key from ' ~ this
        ~ ' where generation < ' ~ generation ~ ') as older left anti join (select distinct'
        ~ ' source_db, source_table, row_key from ' ~ this ~ ' where generation = ' ~ generation
        ~ ') as written on older.source_db <=> written.source_db'
        ~ ' and older.source_table = written.source_table and older.row_key = written.row_key'
    ).columns[0].values()[0] %}
    {%- if keys_left_behind > 0 %}
        {{- return('') -}}
    {%- endif %}
    {%- set partitions = [] %}
    {%- for row in older %}
        {%- do partitions.append('partition (generation = ' ~ row[0] ~ ')') %}
    {%- endfor %}
    {{- return('alter table ' ~ this ~ ' drop if exists ' ~ partitions | join(', ')) -}}
{% endmacro %}
