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
    {%- if not cdc_reads_this() %}
        {{- return([]) -}}
    {%- endif %}
    {%- set files = run_query(
        'select distinct ' ~ _cdc_landed_file_identity() ~ ' as file_identity from ' ~ this
    ) %}
    {{- return(files.columns[0].values() | list) -}}
{% endmacro %}

{% macro cdc_is_new_landed_file(files_already_read) %}
    {%- if files_already_read | length == 0 %}
        {{- return('true') -}}
    {%- endif %}
    {%- set literals = [] %}
    {%- for file in files_already_read %}
        {%- do literals.append(cdc_string_literal(file)) %}
    {%- endfor %}
    {{- return(_cdc_landed_file_identity() ~ ' not in (' ~ literals | join(', ') ~ ')') -}}
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
    {%- if not cdc_reads_this() %}
        {{- return('true') -}}
    {%- endif %}
    {%- set newest = run_query(
        'select cast(unix_micros(max(' ~ column ~ ')) as string) from ' ~ this
    ).columns[0].values()[0] %}
    {{- return('true' if newest is none else column ~ ' > timestamp_micros(' ~ newest ~ ')') -}}
{% endmacro %}

{#
    Key buckets. The row-state tables (int_row_events_sequenced, int_row_versions) are
    partitioned by a hash of the row identity, and an incremental build rewrites only the buckets
    whose input changed (Spark's dynamic partition overwrite): every key of a bucket is
    recomputed from all its events, so an incremental build and a full refresh run the same SQL
    over the same events.
#}
{% macro cdc_key_bucket(source_db, source_table, row_key) %}
    {{- return(
        'if(' ~ row_key ~ ' is null, null, pmod(xxhash64(' ~ source_db ~ ', ' ~ source_table
        ~ ', ' ~ row_key ~ '), ' ~ var('key_buckets') | int ~ '))'
    ) -}}
{% endmacro %}

{#
    The key buckets this model must rewrite: those whose newest input (`input_stamps`: a query of
    key_bucket, stamp) is newer than the build that last wrote them here, and every bucket when
    an input that reaches all keys (`all_keys_stamp`: a query of one stamp, e.g. the newest
    truncate) is newer. A bucket is stamped with `covered_through`, the start of the build that
    wrote it. A list of bucket numbers; none on a full build (every bucket).
#}
{% macro cdc_key_buckets_to_rebuild(input_stamps, all_keys_stamp='select null') %}
    {%- if not cdc_reads_this() %}
        {{- return(none) -}}
    {%- endif %}
    {%- set buckets = run_query(
        'with input_stamps as (select * from (' ~ input_stamps ~ ') as s (key_bucket, stamp)),'
        ~ ' all_keys_stamp as (select max(stamp) as stamp from (' ~ all_keys_stamp ~ ') as s (stamp)),'
        ~ ' written as (select key_bucket, max(covered_through) as covered_through from ' ~ this
        ~ ' group by key_bucket)'
        ~ ' select distinct input_stamps.key_bucket'
        ~ ' from input_stamps cross join all_keys_stamp'
        ~ ' left join written on input_stamps.key_bucket = written.key_bucket'
        ~ ' where written.covered_through is null'
        ~ ' or input_stamps.stamp > written.covered_through'
        ~ ' or all_keys_stamp.stamp > written.covered_through'
    ).columns[0].values() %}
    {{- return(buckets | map('int') | list) -}}
{% endmacro %}

{# A predicate: `bucket_column` is one of `buckets` (a list, or none for every bucket). #}
{% macro cdc_is_in_key_buckets(bucket_column, buckets) %}
    {%- if buckets is none %}
        {{- return('true') -}}
    {%- elif buckets | length == 0 %}
        {{- return('false') -}}
    {%- endif %}
    {{- return(bucket_column ~ ' in (' ~ buckets | map('string') | join(', ') ~ ')') -}}
{% endmacro %}

{# dbt's is_incremental(), false where there is no `this` to read (a dbt unit test). #}
{% macro cdc_reads_this() %}
    {{- return(execute and this is not none and is_incremental()) -}}
{% endmacro %}

{#
    Copy-on-write, the two queries a row-state model shares: the stamp of each bucket it rewrites
    (`cdc_buckets_written`), and the rows of those buckets it copies unchanged, those of the keys
    it does not recompute (`cdc_rows_kept`).
#}
{% macro cdc_buckets_written(buckets) %}
    select
        key_bucket,
        max(covered_through) as covered_through
    from {{ this }}
    where {{ cdc_is_in_key_buckets('key_bucket', buckets) }}
    group by key_bucket
{% endmacro %}

{% macro cdc_rows_kept(keys_to_recompute, buckets) %}
    select kept.*
    from {{ this }} as kept
    left anti join {{ keys_to_recompute }}
        on
            kept.source_db <=> {{ keys_to_recompute }}.source_db
            and kept.source_table = {{ keys_to_recompute }}.source_table
            and kept.row_key = {{ keys_to_recompute }}.row_key
    where {{ cdc_is_in_key_buckets('kept.key_bucket', buckets) }}
{% endmacro %}
