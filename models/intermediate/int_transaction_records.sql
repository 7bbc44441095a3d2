{#
    The records cdc_transactions pairs, narrow: each change that names its source transaction and
    each transaction marker, with the columns the pairing reads. Stored once: cdc_transactions
    reads its records six times over, and each reading of int_records_parsed is three tables and
    an anti-join over every column of every record.

    Incremental (append): the records parsed since its newest (a Qlik data message once bound, an
    Avro record once the registry answered). `cdc-dbt forget` erases a forgotten row's records
    here too (its key is in `row_key`).
#}

{{ config(tblproperties=cdc_parsed_record_table_properties()) }}

with

parsed_records as (

    select * from {{ ref('int_records_parsed') }}
    where {{ cdc_is_newer_than_this('parsed_at') }}

),

final as (

    select
        topic,
        `partition`,
        `offset`,
        outcome,
        ignore_class,
        source_format,
        source_db,
        source_table,
        row_key,
        source_position,
        op,
        source_ts,
        event_ts,
        transaction_id,
        transaction_status,
        transaction_total_order,
        transaction_event_count,
        transaction_collection_counts,
        parsed_at
    from parsed_records
    where
        (outcome = 'change' and transaction_id is not null)
        or ignore_class = 'transaction_marker'

)

select * from final
