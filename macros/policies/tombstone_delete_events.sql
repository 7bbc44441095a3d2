{#
    Tombstone policy (docs/ordering-and-history.md#tombstones). A tombstone (null payload) normally
    follows the delete event that already carried the change, so by default it is ignored and only
    counted. With `treat_tombstones_as_deletes: true` it deletes its key, for topics whose deletes
    reach Kafka as tombstones alone.

    The delete events have the columns of `row_changes`, in its order. A tombstone has no source
    block: it takes its table and row key from the last change with the same Kafka key text that
    precedes it in its Kafka partition (the same key bytes, as Kafka's log compaction matches
    them: a MongoDB key `{"id": "<extended JSON>"}` names the row `{"_id": ...}`), and sorts right
    after that change (position + '~', and '~' sorts after every character a position holds). A
    tombstone with no such change deletes nothing and stays counted as ignored.

    Incrementally, such a tombstone needs every key recomputed (tombstones_recompute_every_key.sql).
#}
{% macro tombstone_delete_events(parsed_records, row_changes) %}
    {{ return(adapter.dispatch('tombstone_delete_events', 'cdc_dbt')(parsed_records, row_changes)) }}
{% endmacro %}

{% macro default__tombstone_delete_events(parsed_records, row_changes) %}
    {%- if var('treat_tombstones_as_deletes', false) %}
    select * except (preceding_rank)
    from (
        select
            preceding.source_db,
            preceding.source_table,
            preceding.row_key,
            'd' as op,
            cast(null as string) as after,
            cast(array() as array<string>) as unavailable_columns,
            cast(null as string) as patch,
            coalesce(tombstone.kafka_ts, preceding.source_ts) as source_ts,
            preceding.source_position || '~' as source_position,
            tombstone.topic,
            tombstone.`partition`,
            tombstone.`offset`,
            row_number() over (
                partition by tombstone.topic, tombstone.`partition`, tombstone.`offset`
                order by preceding.`offset` desc
            ) as preceding_rank
        from {{ parsed_records }} as tombstone
        inner join {{ parsed_records }} as preceding
            on
                tombstone.topic = preceding.topic
                and tombstone.`partition` = preceding.`partition`
                and tombstone.key = preceding.key
                and tombstone.`offset` > preceding.`offset`
        where
            tombstone.ignore_class = 'tombstone'
            and preceding.outcome = 'change'
            and preceding.op in ('c', 'r', 'u', 'd')
    )
    where preceding_rank = 1
    {%- else %}
    -- No row, in the columns of the row changes.
    select
        {{ cdc_dbt.cdc_row_change_columns() }}
    from {{ row_changes }}
    where false
    {%- endif %}
{% endmacro %}
