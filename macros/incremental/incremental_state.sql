{#
    What an incremental build needs to know about the builds before it. Every incremental model
    compares its input with what it already holds, never with a counter of its own, so a build
    killed between two models is completed by the next one: each model takes what its input has
    and it has not.
#}

{# The time this build started, the same for every model of the build: the stamp of its rows. #}
{% macro cdc_build_started_at() %}
    {{- return('timestamp_micros(' ~ (run_started_at.timestamp() * 1000000) | int ~ ')') -}}
{% endmacro %}

{#
    The landed files an incremental model has read already, each as `path|size|mtime micros`:
    a literal list, so that Spark can skip those files when it lists the folder.
#}
{% macro cdc_files_already_read() %}
    {%- if not cdc_dbt.cdc_reads_this() %}
        {{- return([]) -}}
    {%- endif %}
    {%- set files = run_query(
        'select distinct ' ~ cdc_dbt._cdc_landed_file_identity() ~ ' as file_identity from ' ~ this
    ) %}
    {{- return(files.columns[0].values() | list) -}}
{% endmacro %}

{% macro cdc_is_new_landed_file(files_already_read) %}
    {%- if files_already_read | length == 0 %}
        {{- return('true') -}}
    {%- endif %}
    {%- set literals = [] %}
    {%- for file in files_already_read %}
        {%- do literals.append(cdc_dbt.cdc_string_literal(file)) %}
    {%- endfor %}
    {{- return(cdc_dbt._cdc_landed_file_identity() ~ ' not in (' ~ literals | join(', ') ~ ')') -}}
{% endmacro %}

{% macro _cdc_landed_file_identity() %}
    {{- return(
        "concat_ws('|', landed_file, cast(landed_file_size as string),"
        ~ " cast(unix_micros(landed_file_modified_at) as string))"
    ) -}}
{% endmacro %}

{#
    A predicate keeping the rows of `relation` newer than the newest `column` in this model's
    table ('true' on a full build). The bound is a literal, so Parquet statistics skip the files
    of older builds.
#}
{% macro cdc_is_newer_than_this(column) %}
    {%- if not cdc_dbt.cdc_reads_this() %}
        {{- return('true') -}}
    {%- endif %}
    {%- set newest = run_query(
        'select cast(unix_micros(max(' ~ column ~ ')) as string) from ' ~ this
    ).columns[0].values()[0] %}
    {{- return('true' if newest is none else column ~ ' > timestamp_micros(' ~ newest ~ ')') -}}
{% endmacro %}

{#
    A `left anti join` dropping the rows of `relation` whose Kafka identity (topic, partition,
    offset) this model's table holds already; nothing on a full build. `relation` is a CTE or
    table of the model's query, named as in the `from` clause the join follows.

    Only the table's rows within the offsets `relation` spans in each topic partition take part:
    a record already held has its offset in that range, and the ranges (one per topic partition,
    broadcast) cut the table's side of the join to a few rows, where joining every identity it
    held shuffled them all, the most of what an incremental build spent parsing a small batch.
#}
{% macro cdc_not_yet_in_this(relation) %}
    {%- if cdc_dbt.cdc_reads_this() %}
    left anti join (
        select /*+ broadcast(offset_ranges) */
            already_held.topic,
            already_held.`partition`,
            already_held.`offset`
        from {{ this }} as already_held
        inner join (
            select
                topic,
                `partition`,
                min(`offset`) as first_offset,
                max(`offset`) as last_offset
            from {{ relation }}
            group by topic, `partition`
        ) as offset_ranges
            on
                already_held.topic = offset_ranges.topic
                and already_held.`partition` = offset_ranges.`partition`
                and already_held.`offset` between offset_ranges.first_offset and offset_ranges.last_offset
    ) as already_in_this
        on
            {{ relation }}.topic = already_in_this.topic
            and {{ relation }}.`partition` = already_in_this.`partition`
            and {{ relation }}.`offset` = already_in_this.`offset`
    {%- endif %}
{% endmacro %}

{#
    Generations. On Parquet (no MERGE) they make the row-state tables merge-on-read; on Delta
    (table_formats.sql) a build merges its keys' rows instead, and a row's generation only
    says which build last computed it. The row-state tables, int_row_events_sequenced and
    int_row_events_versioned, are partitioned by `generation`: the build that computed the rows, as
    the microseconds of its start. A build recomputes the keys with new input, from all their events,
    and writes their rows as a new generation; nothing else is copied or rewritten. A key's rows in
    older generations are then superseded, and every reader takes each key's newest generation
    (`cdc_newest_generation_rows`). When the rows of the newer generations reach
    `compaction_threshold` times those of the oldest, the build recomputes every key instead
    (compaction) and its post-hook drops the generations it superseded.
#}
{% macro cdc_build_generation() %}
    {{- return((run_started_at.timestamp() * 1000000) | int) -}}
{% endmacro %}

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
    {%- set sizes = cdc_dbt._cdc_generation_sizes() %}
    {%- if not sizes %}
        {{- return(none) -}}
    {%- endif %}
    {%- set newer_rows = sizes[1:] | map(attribute=1) | sum %}
    {%- if sizes | length > 1 and newer_rows >= sizes[0][1] * var('compaction_threshold') | float %}
        {{- return(none) -}}
    {%- endif %}
    {{- return(sizes[-1][0]) -}}
{% endmacro %}

{# (generation, row count) of each generation of this model's table, oldest first. Parquet footers answer it. #}
{% macro _cdc_generation_sizes() %}
    {%- set sizes = run_query(
        'select generation, count(*) from ' ~ this ~ ' group by generation order by generation'
    ) %}
    {{- return(sizes.rows | map('list') | list) -}}
{% endmacro %}

{#
    The rows of `relation` in the newest generation of their key: what a row-state table holds.
    With `keys_to_recompute` (a CTE of keys), only the rows of those keys.
#}
{% macro cdc_newest_generation_rows(relation, keys_to_recompute=none) %}
    {%- if cdc_dbt.cdc_merges_rows() %}
    {#- A merged table holds each key's rows once: no window over generations. #}
    {{ cdc_dbt.cdc_events_of_keys_to_recompute(relation, keys_to_recompute) }}
    {%- else %}
    select * except (newest_generation_of_key)
    from (
        select
            *,
            max(generation) over (
                partition by source_db, source_table, row_key
            ) as newest_generation_of_key
        {%- if keys_to_recompute is none %}
        from {{ relation }}
        {%- else %}
        from ({{ cdc_dbt.cdc_events_of_keys_to_recompute(relation, keys_to_recompute) }})
        {%- endif %}
    )
    -- <=>: dbt unit tests give rows without a generation.
    where generation <=> newest_generation_of_key
    {%- endif %}
{% endmacro %}

{#
    What a per-key generic test reads: the model, or with `generation_column` the rows of its
    newest generation (a row-state table).
#}
{% macro cdc_rows_to_check(test_name, model, generation_column=none) %}
    {%- if generation_column is none -%}
        {{- return(model) -}}
    {%- endif -%}
    {%- do cdc_dbt.cdc_check_name_arguments(test_name, {'generation_column': generation_column}) -%}
    {{- return(cdc_dbt.cdc_rows_of_newest_generation(model, generation_column)) -}}
{% endmacro %}

{#
    The rows of `relation` in its newest generation, as a derived table: the keys the last build
    recomputed, each with all its rows (a build recomputes a key from all its events). What the
    per-key data tests check, so that a build checks what it wrote; earlier builds checked theirs.
    The maximum is a subquery Spark evaluates before it lists the table's files, so only that
    generation's partition is read.
#}
{% macro cdc_rows_of_newest_generation(relation, generation_column='generation') %}
    {%- set generation = cdc_dbt.cdc_quote_identifier(generation_column) -%}
    {{- return(
        '(select * from ' ~ relation ~ ' where ' ~ generation ~ ' = (select max(' ~ generation ~ ') from '
        ~ relation ~ ')) as newest_generation'
    ) -}}
{%- endmacro %}

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
    {%- set sizes = cdc_dbt._cdc_generation_sizes() %}
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

{#
    dbt's is_incremental(), false where there is no `this` to read (a dbt unit test). A table of
    another format than the build's (CDC_TABLE_FORMAT changed on a built warehouse) is a compiler
    error saying what to run, rather than a MERGE failing deep in Spark.
#}
{% macro cdc_reads_this() %}
    {%- set reads_this = execute and this is not none and is_incremental() %}
    {%- if reads_this %}
        {%- do cdc_dbt.cdc_require_table_format_of_this() %}
    {%- endif %}
    {{- return(reads_this) -}}
{% endmacro %}
