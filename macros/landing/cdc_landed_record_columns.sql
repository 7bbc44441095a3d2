{#
    The columns of a landed record, in the one order int_deliveries_loaded keeps them: it unions
    the two landing formats by selecting these names from each, never by position, so a format's
    model may compute its columns in any order.
#}
{% macro cdc_landed_record_columns() %}
    {%- set columns = [
        'topic', '`partition`', '`offset`', 'kafka_ts', 'headers', 'key', 'payload', 'is_key_base64',
        'is_payload_base64', 'landing_reason', 'landing_detail', 'landed_file', 'landed_file_size',
        'landed_file_modified_at', 'landing_format',
    ] %}
    {{- return(columns | join(',\n        ')) -}}
{% endmacro %}
