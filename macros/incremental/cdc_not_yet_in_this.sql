{#
    A `left anti join` dropping the rows of `relation` whose Kafka identity (topic, partition,
    offset) this model's table holds already; nothing on a full build. `relation` is a CTE or
    table of the model's query, named as in the `from` clause the join follows.

    Only the table's rows within the offsets `relation` spans in each topic partition take part:
    a record already held has its offset in that range, and the ranges (one per topic partition,
    broadcast) cut the table's side of the join to a few rows, where joining every identity it
    held shuffled them all, the most of what an incremental build spent parsing a small batch.
#}
{% macro cdc_not_yet_in_this(relation) %}
    {%- if cdc_dbt.cdc_reads_this() %}
    left anti join (
        select /*+ broadcast(offset_ranges) */
            already_held.topic,
            already_held.`partition`,
            already_held.`offset`
        from {{ this }} as already_held
        inner join (
            select
                topic,
                `partition`,
                min(`offset`) as first_offset,
                max(`offset`) as last_offset
            from {{ relation }}
            group by topic, `partition`
        ) as offset_ranges
            on
                already_held.topic = offset_ranges.topic
                and already_held.`partition` = offset_ranges.`partition`
                and already_held.`offset` between offset_ranges.first_offset and offset_ranges.last_offset
    ) as already_in_this
        on
            {{ relation }}.topic = already_in_this.topic
            and {{ relation }}.`partition` = already_in_this.`partition`
            and {{ relation }}.`offset` = already_in_this.`offset`
    {%- endif %}
{% endmacro %}
