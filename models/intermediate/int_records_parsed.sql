{#
    Every landed record once, with its outcome: the records as int_records_parsed_unbound parsed
    them, a held record replaced by its row of a later build once it could be read: a Qlik data
    message by its bound row from int_qlik_records_bound once its metadata has landed, an Avro
    record held for the Schema Registry by its row from int_avro_records_retried once the registry
    answered. A view: the three tables are incremental, and the rows of the later builds are few.
#}

{{ config(materialized='view') }}

with

unbound_records as (

    select * from {{ ref('int_records_parsed_unbound') }}

),

bound_records as (

    select * from {{ ref('int_qlik_records_bound') }}

),

retried_records as (

    select * from {{ ref('int_avro_records_retried') }}

),

-- Each held for its own reason (`unknown_qlik_schema`, a registry's): no record is in both.
records_read_later as (

    select * from bound_records
    union all
    select * from retried_records

),

final as (

    select unbound_records.*
    from unbound_records
    left anti join records_read_later
        on
            unbound_records.topic = records_read_later.topic
            and unbound_records.`partition` = records_read_later.`partition`
            and unbound_records.`offset` = records_read_later.`offset`
    union all
    select * from records_read_later

)

-- Every side has the columns of cdc_record_outcome_columns, in its order.
select * from final  -- noqa: AM04
