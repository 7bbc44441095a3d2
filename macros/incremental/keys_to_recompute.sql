{#
    What a build of a row-state model recomputes (merge-on-read, see incremental_state.sql): the
    keys with new input since the generation it adds to, each from all of its events.
#}

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

{#
    A predicate on `parsed_at`: the record was parsed by a build after the one that wrote
    `generation` (a generation is its build's start, and so is the `parsed_at` of what it parsed).
#}
{% macro cdc_parsed_since(generation) %}
    {{- return('parsed_at > timestamp_micros(' ~ generation ~ ')') -}}
{% endmacro %}

{#
    Whether some row of `relation` that meets `condition` was parsed since `generation`: one
    count, before the model's SQL is written, for a rule that changes what a build recomputes.
#}
{% macro cdc_any_parsed_since(relation, condition, generation) %}
    {%- if not execute %}
        {{- return(false) -}}
    {%- endif %}
    {%- set count = run_query(
        'select count(*) from ' ~ relation ~ ' where ' ~ condition ~ ' and ' ~ cdc_dbt.cdc_parsed_since(generation)
    ).columns[0].values()[0] %}
    {{- return(count > 0) -}}
{% endmacro %}

{#
    A `select` of the keys with a row change (c, r, u or d) in `parsed_records` parsed since
    `generation`: the keys int_row_events_sequenced recomputes.
#}
{% macro cdc_keys_changed_since(parsed_records, generation) %}
    select distinct
        source_db,
        source_table,
        row_key
    from {{ parsed_records }}
    where
        outcome = 'change'
        and op in ('c', 'r', 'u', 'd')
        and {{ cdc_dbt.cdc_parsed_since(generation) }}
{% endmacro %}

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
