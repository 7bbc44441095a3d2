{#
    Generations. On Parquet (no MERGE) they make the row-state tables merge-on-read; on Delta
    (cdc_merges_rows.sql) a build merges its keys' rows instead, and a row's generation only
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
