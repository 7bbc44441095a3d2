{#
    The table properties of the parsed-record tables (int_records_parsed_unbound,
    int_qlik_records_bound, int_avro_records_retried, and int_transaction_records). On Delta,
    file statistics on the columns builds filter by, so a scan skips the files that cannot match:
    `parsed_at` (every "parsed since the last build" of the incremental models) and the columns
    `cdc-dbt forget` finds records by.
    Delta's default, the first 32 columns, misses `parsed_at` and spends its time on the row images.
#}
{% macro cdc_parsed_record_table_properties() %}
    {#- None, not {}: dbt-spark writes `tblproperties ()` for an empty one, which Spark refuses. #}
    {%- if cdc_dbt.cdc_table_format() != 'delta' %}
        {{- return(none) -}}
    {%- endif %}
    {{- return({
        'delta.dataSkippingStatsColumns': 'parsed_at,outcome,topic,partition,offset,source_db,source_table',
    }) -}}
{% endmacro %}
