{#
    The quarantine reasons of records a later build can read, once the Schema Registry answers
    (or is configured): udfs/schema_registry.py RETRYABLE_REASONS, which a test holds this list to.
    As a SQL list: `reason in {{ cdc_registry_retry_reasons() }}`.
#}
{% macro cdc_registry_retry_reasons() %}
    {{- return("('no_schema_registry', 'schema_registry_unavailable')") -}}
{% endmacro %}
