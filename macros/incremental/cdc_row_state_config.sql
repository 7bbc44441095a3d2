{#
    The config() of a row-state model (int_row_events_sequenced, int_row_events_versioned):
    merged on `row_identity` (the columns naming one of its rows) where the format has MERGE,
    else a new `generation` partition per build.
#}
{% macro cdc_row_state_config(row_identity) %}
    {%- if cdc_dbt.cdc_merges_rows() %}
        {{- return({'incremental_strategy': 'merge', 'unique_key': row_identity}) -}}
    {%- endif %}
    {{- return({
        'incremental_strategy': 'insert_overwrite',
        'partition_by': ['generation'],
        'post_hook': '{{ cdc_drop_superseded_generations() }}',
    }) -}}
{% endmacro %}
