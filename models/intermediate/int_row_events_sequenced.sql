{#
    One row per row event (c, r, u, d, and tombstones under the tombstone policy) per key, each
    source event once, with the full row it leaves behind.

    - Identity of a row: (source_db, source_table, row_key).
    - The same event delivered twice (same key, source position and op) is kept once.
    - Columns an event does not know (TOAST's __debezium_unavailable_value) keep the previous
      value, and a MongoDB patch (1.x `patch`, 2.x `updateDescription`) changes only what it
      names: a fold over the key's events in source order
      (macros/parsing/cdc_events_with_resolved_rows.sql), run only for the keys that need it.

    Incremental (macros/incremental/): a build recomputes the keys with changes parsed since the
    newest generation, from all their events, and merges their rows (Delta), or writes them as a
    new generation whose rows readers take over older ones (Parquet, merge-on-read). New
    tombstones can need every key recomputed instead (tombstone policy,
    macros/policies/tombstones_recompute_every_key.sql).
#}

{{ config(**cdc_row_state_config(row_identity=['source_db', 'source_table', 'row_key', 'source_position', 'op'])) }}

{%- set generation_built_on = cdc_generation_to_build_on() %}
{%- if tombstones_recompute_every_key(ref('int_records_parsed'), generation_built_on) %}
    {%- set generation_built_on = none %}
{%- endif %}
{%- set recomputes_keys_only = generation_built_on is not none %}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

row_changes as (

    select
        {{ cdc_row_change_columns() }}
    from parsed_records
    where outcome = 'change' and op in ('c', 'r', 'u', 'd')

),

tombstone_deletes as (

    {{ tombstone_delete_events('parsed_records', 'row_changes') }}

),

{% if recomputes_keys_only %}
keys_to_recompute as (

    {{ cdc_keys_changed_since('parsed_records', generation_built_on) }}

),
{% endif %}

all_row_events as (

    select * from row_changes
    union all
    select * from tombstone_deletes

),

row_events as (

    {{ cdc_events_of_keys_to_recompute(
        'all_row_events', 'keys_to_recompute' if recomputes_keys_only else none
    ) }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by source_db, source_table, row_key, source_position, op
            order by topic, `partition`, `offset`
        ) as delivery_number,
        max(coalesce(size(unavailable_columns), 0) > 0 or patch is not null) over (
            partition by source_db, source_table, row_key
        ) as has_unknown_values
    from row_events

),

deduplicated as (

    select * except (delivery_number)
    from ranked
    where delivery_number = 1

),

complete_events as (

    select
        * except (has_unknown_values),
        after as row
    from deduplicated
    where not has_unknown_values

),

events_with_unknown_values as (

    select * except (has_unknown_values)
    from deduplicated
    where has_unknown_values

),

resolved_events as (

    {{ cdc_events_with_resolved_rows('events_with_unknown_values') }}

),

events_computed as (

    select * from complete_events
    union all
    select * from resolved_events

),

final as (

    select
        *,
        {{ cdc_build_generation() }} as generation
    from events_computed

)

select * from final
