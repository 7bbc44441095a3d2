{#
    The rows of `relation` in the newest generation of their key: what a row-state table holds.
    With `keys_to_recompute` (a CTE of keys), only the rows of those keys.
#}
{% macro cdc_newest_generation_rows(relation, keys_to_recompute=none) %}
    {%- if cdc_dbt.cdc_merges_rows() %}
    {#- A merged table holds each key's rows once: no window over generations. #}
    {{ cdc_dbt.cdc_events_of_keys_to_recompute(relation, keys_to_recompute) }}
    {%- else %}
    select * except (newest_generation_of_key)
    from (
        select
            *,
            max(generation) over (
                partition by source_db, source_table, row_key
            ) as newest_generation_of_key
        {%- if keys_to_recompute is none %}
        from {{ relation }}
        {%- else %}
        from ({{ cdc_dbt.cdc_events_of_keys_to_recompute(relation, keys_to_recompute) }})
        {%- endif %}
    )
    -- <=>: dbt unit tests give rows without a generation.
    where generation <=> newest_generation_of_key
    {%- endif %}
{% endmacro %}
