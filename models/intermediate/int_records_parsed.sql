{#
    Every landed record once, with its outcome: the records as int_records_parsed_unbound parsed
    them, a held Qlik data message replaced by its bound row from int_qlik_records_bound once its
    metadata has landed. A view: both tables are incremental, and the bound rows are few.
#}

{{ config(materialized='view') }}

with

unbound_records as (

    select * from {{ ref('int_records_parsed_unbound') }}

),

bound_records as (

    select * from {{ ref('int_qlik_records_bound') }}

),

final as (

    select unbound_records.*
    from unbound_records
    left anti join bound_records
        on
            unbound_records.topic = bound_records.topic
            and unbound_records.`partition` = bound_records.`partition`
            and unbound_records.`offset` = bound_records.`offset`
    union all
    select * from bound_records

)

-- Both sides have the columns of cdc_record_outcome_columns, in its order.
select * from final  -- noqa: AM04
