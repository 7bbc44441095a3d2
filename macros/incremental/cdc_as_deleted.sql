{#
    The select list that makes rows of this aggregate's table (read as `alias`) delete themselves
    in its merge (cdc_aggregate_config): every column, `generation` null. A table built before it
    had the column (dbt adds it in this build) gets it too.
#}
{% macro cdc_as_deleted(alias) %}
    {%- set has_generation = 'generation' in adapter.get_columns_in_relation(this) | map(attribute='name') | list %}
    {{- alias ~ '.*' ~ (' except (generation)' if has_generation else '') ~ ', cast(null as bigint) as generation' -}}
{% endmacro %}
