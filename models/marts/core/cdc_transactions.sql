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

-- Stored on Delta, recomputed whole by each build: the pairing reads its records six times over,
-- which as a view every reader and data test paid again, and cdc_current_consistent's every
-- query; a view on Parquet, where dbt drops a table before creating it again. Merging only the
-- transactions new records touch did not pay (docs/incremental-builds.md).
{{ config(materialized='table' if cdc_merges_rows() else 'view') }}

with

transaction_records as (

    select * from {{ ref('int_transaction_records') }}

),

erasures as (

    select * from {{ ref('stg_warehouse__erasures') }}

),

{#
    The changes of source transactions that `cdc-dbt forget` erased still count as landed: they
    did land, and a transaction short of them would stay incomplete for good (and hold
    cdc_current_consistent back at its start). The erasure list keeps their place in their
    transaction, never their row; an event delivered twice is there once per delivery, and counts once.
#}
erased_changes as (

    select distinct
        source_format,
        transaction_id,
        source_db,
        source_table,
        cast(null as string) as row_key,
        source_position,
        op,
        source_ts,
        transaction_total_order,
        transaction_event_count
    from erasures
    where transaction_id is not null

),

changes as (

    select
        source_format,
        transaction_id,
        source_db,
        source_table,
        row_key,
        source_position,
        op,
        source_ts,
        transaction_total_order,
        transaction_event_count
    from transaction_records
    where outcome = 'change'
    union all
    select
        source_format,
        transaction_id,
        source_db,
        source_table,
        row_key,
        source_position,
        op,
        source_ts,
        transaction_total_order,
        transaction_event_count
    from erased_changes

),

marker_records as (

    select * from transaction_records
    where ignore_class = 'transaction_marker'

),

{#
    Debezium's PostgreSQL connector names a transaction `txId:LSN` with the LSN it had just read:
    the BEGIN carries the LSN where the transaction began, each event its own, the END the one
    where it committed. Each of them belongs to the newest BEGIN of its txId at or before its LSN
    (a txId recurs only after wraparound), and the transaction is named by that BEGIN's id. Every
    other connector's id names its transaction whole.
#}
postgres_ids as (

    select distinct
        transaction_id,
        transaction_status,
        split_part(transaction_id, ':', 1) as postgres_tx_id,
        cast(split_part(transaction_id, ':', 2) as decimal(20, 0)) as postgres_lsn
    from (
        select
            transaction_id,
            transaction_status
        from marker_records
        union all
        select
            transaction_id,
            cast(null as string) as transaction_status
        from changes
        where source_format = 'debezium'
    ) as carried_ids
    where transaction_id rlike '^[0-9]+:[0-9]+$'

),

transaction_ids as (

    select
        carried.transaction_id as carried_id,
        max_by(begins.transaction_id, begins.postgres_lsn) as transaction_id
    from postgres_ids as carried
    inner join postgres_ids as begins
        on
            carried.postgres_tx_id = begins.postgres_tx_id
            and carried.postgres_lsn >= begins.postgres_lsn
    where begins.transaction_status = 'BEGIN' and carried.transaction_status is distinct from 'BEGIN'
    group by carried.transaction_id

),

markers as (

    select
        coalesce(transaction_ids.transaction_id, marker_records.transaction_id) as transaction_id,
        max(marker_records.transaction_status = 'BEGIN') as is_begin_landed,
        max(marker_records.transaction_status = 'END') as is_end_landed,
        min(if(marker_records.transaction_status = 'BEGIN', marker_records.event_ts, null)) as begin_ts,
        max(if(marker_records.transaction_status = 'END', marker_records.event_ts, null)) as end_ts,
        max(marker_records.transaction_event_count) as expected_event_count,
        max(marker_records.transaction_collection_counts) as expected_collection_counts
    from marker_records
    left join transaction_ids
        on marker_records.transaction_id = transaction_ids.carried_id
    group by coalesce(transaction_ids.transaction_id, marker_records.transaction_id)

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
        coalesce(transaction_ids.transaction_id, changes.transaction_id) as transaction_id,
        changes.source_db,
        changes.source_table,
        changes.row_key,
        changes.source_position,
        changes.op,
        changes.source_ts
    from changes
    left join transaction_ids
        on changes.transaction_id = transaction_ids.carried_id
    where
        changes.source_format = 'debezium'
        and changes.transaction_id is not null

),

landed_per_collection as (

    select
        transaction_id,
        source_table as data_collection,
        count(*) as landed_event_count,
        min(source_ts) as first_event_ts
    from landed_events
    group by transaction_id, source_table

),

per_collection as (

    select
        coalesce(expected_per_collection.transaction_id, landed_per_collection.transaction_id) as transaction_id,
        coalesce(expected_per_collection.data_collection, landed_per_collection.data_collection) as data_collection,
        expected_per_collection.expected_event_count,
        coalesce(landed_per_collection.landed_event_count, 0) as landed_event_count,
        landed_per_collection.first_event_ts
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
        bool_and(expected_event_count <=> landed_event_count) as is_every_collection_landed,
        min(first_event_ts) as first_event_ts
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
        markers.begin_ts,
        markers.end_ts,
        least(markers.begin_ts, per_transaction.first_event_ts, markers.end_ts) as started_ts,
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
    from changes
    where source_format = 'qlik' and transaction_id is not null

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
        min(if(qlik_events.event_number = 1, qlik_events.source_ts, null)) as begin_ts,
        max(if(qlik_events.transaction_event_count is not null, qlik_events.source_ts, null)) as end_ts,
        min(qlik_events.source_ts) as started_ts,
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
