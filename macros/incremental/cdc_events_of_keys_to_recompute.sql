{#
    A `select` of the rows of `events` whose key is in `keys_to_recompute`; every row when that
    is none (the build recomputes every key). `source_db` matches null-safe: some formats name
    no database.
#}
{% macro cdc_events_of_keys_to_recompute(events, keys_to_recompute) %}
    select {{ events }}.*
    from {{ events }}
    {%- if keys_to_recompute is not none %}
    left semi join {{ keys_to_recompute }}
        on
            {{ events }}.source_db <=> {{ keys_to_recompute }}.source_db
            and {{ events }}.source_table = {{ keys_to_recompute }}.source_table
            and {{ events }}.row_key = {{ keys_to_recompute }}.row_key
    {%- endif %}
{% endmacro %}
