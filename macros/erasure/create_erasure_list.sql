{#
    The erasure list (`cdc-dbt forget`, docs/commands.md#forgetting-a-row-cdc-dbt-forget): what
    every build withholds of the rows forgotten, by the records' identities and by their Kafka
    keys' fingerprints, never by the keys themselves. A table of the warehouse that no model
    writes: `cdc-dbt forget` appends to it, and a `--full-refresh` keeps it, so a forgotten row
    stays forgotten. Created empty (if missing) at the start of every run, so that the models
    reading it find it in a warehouse no forget has touched; in the build's table format.
#}
{% macro create_erasure_list() %}
    {{ return(adapter.dispatch('create_erasure_list', 'cdc_dbt')()) }}
{% endmacro %}

{% macro default__create_erasure_list() %}
    {% if execute %}
        {%- set schema = cdc_dbt.cdc_quote_identifier(target.schema) -%}
        {% do run_query('create schema if not exists ' ~ schema) %}
        {% do run_query(
            'create table if not exists ' ~ schema ~ '.`cdc_erasures` ('
            ~ ' `erasure_id` string, `forgotten_ts` timestamp, `source_db` string, `source_table` string,'
            ~ ' `topic` string, `partition` int, `offset` bigint, `kafka_key_sha256` string,'
            ~ ' `source_format` string, `transaction_id` string, `source_position` string, `op` string,'
            ~ ' `source_ts` timestamp, `transaction_total_order` bigint, `transaction_event_count` bigint)'
            ~ ' using ' ~ cdc_dbt.cdc_table_format()
            ~ " comment 'The rows cdc-dbt forget erased: what every build withholds (docs/commands.md)'"
        ) %}
    {% endif %}
    {{ return('') }}
{% endmacro %}
