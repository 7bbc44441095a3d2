{#
    Exposes CDC_LANDING_DIR to dbt as two external tables, recreated at the start of every run so
    that the file listing is fresh and a changed CDC_LANDING_DIR takes effect:
    - `kcat_json_lines`: every line of the JSON-lines files kcat writes (*.json, *.jsonl, *.ndjson,
      *.txt, gzip-compressed or not);
    - `kafka_parquet_records`: the Parquet files Spark's Kafka source writes (*.parquet);
    - `landed_record_times`: a view of both, the Kafka timestamp of every landed record (what
      `dbt source freshness` measures, whichever format landed).
    Both read the folder recursively. They are EXTERNAL (LOCATION): dropping them never touches
    the landed files. On Iceberg, whose catalog is the session's default and holds Iceberg tables
    only, they stay in Spark's own catalog, `spark_catalog` (the `landing` source says the same).
#}
{% macro create_landing_tables() %}
    {{ return(adapter.dispatch('create_landing_tables', 'cdc_dbt')()) }}
{% endmacro %}

{% macro default__create_landing_tables() %}
    {% if execute %}
        {%- set catalog = 'spark_catalog.' if cdc_dbt.cdc_table_format() == 'iceberg' else '' -%}
        {%- set schema = catalog ~ cdc_dbt.cdc_quote_identifier(var('landing_schema')) -%}
        {%- set location = cdc_dbt.cdc_string_literal(env_var('CDC_LANDING_DIR')) -%}
        {% do run_query('create schema if not exists ' ~ schema) %}
        {% do run_query('drop table if exists ' ~ schema ~ '.`kcat_json_lines`') %}
        {% do run_query(
            'create table ' ~ schema ~ '.`kcat_json_lines` (value string) using text'
            ~ " options (recursiveFileLookup 'true', pathGlobFilter "
            ~ cdc_dbt.cdc_string_literal(var('kcat_file_glob', '*.{json,jsonl,ndjson,txt,json.gz,jsonl.gz,ndjson.gz}')) ~ ")"
            ~ ' location ' ~ location
        ) %}
        {% do run_query('drop table if exists ' ~ schema ~ '.`kafka_parquet_records`') %}
        {% do run_query(
            'create table ' ~ schema ~ '.`kafka_parquet_records` ('
            ~ ' `key` binary, `value` binary, `topic` string, `partition` int, `offset` bigint,'
            ~ ' `timestamp` timestamp, `timestampType` int,'
            ~ ' `headers` array<struct<`key`: string, `value`: binary>>)'
            ~ " using parquet options (recursiveFileLookup 'true', pathGlobFilter '*.parquet')"
            ~ ' location ' ~ location
        ) %}
        {% do run_query(
            'create or replace view ' ~ schema ~ '.`landed_record_times` as'
            ~ " select timestamp_millis(try_cast(get_json_object(value, '$.ts') as bigint)) as kafka_ts"
            ~ ' from ' ~ schema ~ '.`kcat_json_lines`'
            ~ ' union all select `timestamp` from ' ~ schema ~ '.`kafka_parquet_records`'
        ) %}
    {% endif %}
    {{ return('') }}
{% endmacro %}
