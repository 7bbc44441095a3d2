{#
    The fingerprint of a record's Kafka key in the erasure list: SHA-256 of its topic, a NUL and
    the key's text as landed. `cdc-dbt forget` computes the same in Python (cdc_dbt/forget.py,
    `kafka_key_fingerprint`); a dbt unit test of int_deliveries_loaded holds the two together.
#}
{% macro cdc_kafka_key_fingerprint(topic, key) %}
    {{- return('sha2(concat(' ~ topic ~ ', char(0), ' ~ key ~ '), 256)') -}}
{% endmacro %}

