{#
    Tombstone policy, incremental side (docs/ordering-and-history.md#tombstones). A build
    recomputes the keys with new changes, and a tombstone is no change: its key is found only
    through the change before it, which an older build may have parsed. So while tombstones are
    deletes (tombstone_delete_events.sql), a build that parsed new ones recomputes every key.
#}
{% macro tombstones_recompute_every_key(parsed_records, generation_built_on) %}
    {{ return(adapter.dispatch('tombstones_recompute_every_key', 'cdc_dbt')(parsed_records, generation_built_on)) }}
{% endmacro %}

{% macro default__tombstones_recompute_every_key(parsed_records, generation_built_on) %}
    {%- if generation_built_on is none or not var('treat_tombstones_as_deletes', false) %}
        {{- return(false) -}}
    {%- endif %}
    {{- return(cdc_dbt.cdc_any_parsed_since(parsed_records, "ignore_class = 'tombstone'", generation_built_on)) -}}
{% endmacro %}
