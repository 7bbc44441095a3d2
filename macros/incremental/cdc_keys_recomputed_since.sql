{#
    A `select` of the keys with rows of a generation newer than `generation` in `events`: the keys
    the model before this one recomputed in this build (or in a build killed before this model).
#}
{% macro cdc_keys_recomputed_since(events, generation) %}
    select
        source_db,
        source_table,
        row_key
    from {{ events }}
    where generation > {{ generation }}
{% endmacro %}
