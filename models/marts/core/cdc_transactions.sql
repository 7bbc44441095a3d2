{#
    Source transactions and whether every event of each has landed.
    - Debezium (transaction metadata enabled): its BEGIN and END markers and, per data
      collection, the events its END says it wrote against the events that have landed.
    - Qlik Replicate: its changes number themselves within their transaction
      (`transactionEventCounter`, from 1) and the last says so (`transactionLastEvent`), so the
      last one's number is the transaction's event count; no markers, no counts per table.
    Complete when the count is known and every event has landed. An event delivered twice (same
    key, source position and op; for Qlik, the same number) counts once, as it applies once.
#}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}

),

markers as (

    select
        transaction_id,
        max(transaction_status = 'BEGIN') as is_begin_landed,
        max(transaction_status = 'END') as is_end_landed,
        min(if(transaction_status = 'BEGIN', event_ts, null)) as begun_at,
        max(if(transaction_status = 'END', event_ts, null)) as ended_at,
        max(transaction_event_count) as expected_event_count,
        max(transaction_collection_counts) as expected_collection_counts
    from parsed_records
    where ignore_class = 'transaction_marker'
    group by transaction_id

),

expected_per_collection as (

    select
        transaction_id,
        explode(
            from_json(expected_collection_counts, 'map<string, bigint>')
        ) as (data_collection, expected_event_count)
    from markers

),

landed_events as (

    select distinct
        transaction_id,
        source_db,
        source_table,
        row_key,
        source_position,
        op
    from parsed_records
    where outcome = 'change' and source_format = 'debezium' and transaction_id is not null

),

landed_per_collection as (

    select
        transaction_id,
        source_table as data_collection,
        count(*) as landed_event_count
    from landed_events
    group by transaction_id, source_table

),

per_collection as (

    select
        coalesce(expected_per_collection.transaction_id, landed_per_collection.transaction_id) as transaction_id,
        coalesce(expected_per_collection.data_collection, landed_per_collection.data_collection) as data_collection,
        expected_per_collection.expected_event_count,
        coalesce(landed_per_collection.landed_event_count, 0) as landed_event_count
    from expected_per_collection
    full outer join landed_per_collection
        on
            expected_per_collection.transaction_id = landed_per_collection.transaction_id
            and expected_per_collection.data_collection = landed_per_collection.data_collection

),

per_transaction as (

    select
        transaction_id,
        sum(landed_event_count) as landed_event_count,
        sort_array(
            collect_list(struct(data_collection, expected_event_count, landed_event_count))
        ) as event_counts,
        bool_and(expected_event_count <=> landed_event_count) as is_every_collection_landed
    from per_collection
    group by transaction_id

),

debezium_transactions as (

    select
        'debezium' as source_format,
        coalesce(markers.transaction_id, per_transaction.transaction_id) as transaction_id,
        case
            when markers.is_end_landed then 'END'
            when markers.is_begin_landed then 'BEGIN'
        end as status,
        coalesce(markers.is_begin_landed, false) as is_begin_landed,
        coalesce(markers.is_end_landed, false) as is_end_landed,
        markers.begun_at,
        markers.ended_at,
        markers.expected_event_count,
        coalesce(per_transaction.landed_event_count, 0) as landed_event_count,
        coalesce(per_transaction.event_counts, array()) as event_counts,
        coalesce(
            markers.is_end_landed
            and markers.expected_event_count = coalesce(per_transaction.landed_event_count, 0)
            and coalesce(per_transaction.is_every_collection_landed, true),
            false
        ) as is_complete
    from markers
    full outer join per_transaction
        on markers.transaction_id = per_transaction.transaction_id

),

qlik_events as (

    select distinct
        transaction_id,
        source_table,
        transaction_total_order as event_number,
        transaction_event_count,
        source_ts
    from parsed_records
    where outcome = 'change' and source_format = 'qlik' and transaction_id is not null

),

qlik_per_collection as (

    select
        transaction_id,
        source_table as data_collection,
        count(distinct event_number) as landed_event_count
    from qlik_events
    group by transaction_id, source_table

),

qlik_event_counts as (

    select
        transaction_id,
        sort_array(
            collect_list(struct(data_collection, cast(null as bigint) as expected_event_count, landed_event_count))
        ) as event_counts
    from qlik_per_collection
    group by transaction_id

),

qlik_transactions as (

    select
        'qlik' as source_format,
        qlik_events.transaction_id,
        case
            when max(qlik_events.transaction_event_count is not null) then 'END'
            when max(qlik_events.event_number = 1) then 'BEGIN'
        end as status,
        coalesce(max(qlik_events.event_number = 1), false) as is_begin_landed,
        max(qlik_events.transaction_event_count is not null) as is_end_landed,
        min(if(qlik_events.event_number = 1, qlik_events.source_ts, null)) as begun_at,
        max(if(qlik_events.transaction_event_count is not null, qlik_events.source_ts, null)) as ended_at,
        max(qlik_events.transaction_event_count) as expected_event_count,
        count(distinct qlik_events.event_number) as landed_event_count,
        any_value(qlik_event_counts.event_counts) as event_counts,
        coalesce(max(qlik_events.transaction_event_count) = count(distinct qlik_events.event_number), false)
            as is_complete
    from qlik_events
    inner join qlik_event_counts
        on qlik_events.transaction_id = qlik_event_counts.transaction_id
    group by qlik_events.transaction_id

),

final as (

    select * from debezium_transactions
    union all
    select * from qlik_transactions

)

select * from final
