{#
    Every landed record once, with its outcome: the records as int_records_decoded parsed them,
    a held Qlik data message replaced by its bound row from int_qlik_records_bound once its
    metadata has landed. A view: both tables are incremental, and the bound rows are few.
#}

{{ config(materialized='view') }}

with

decoded_records as (

    select * from {{ ref('int_records_decoded') }}

),

bound_records as (

    select * from {{ ref('int_qlik_records_bound') }}

),

final as (

    select decoded_records.*
    from decoded_records
    left anti join bound_records
        on
            decoded_records.topic = bound_records.topic
            and decoded_records.`partition` = bound_records.`partition`
            and decoded_records.`offset` = bound_records.`offset`
    union all
    select * from bound_records

)

-- Both sides have the columns of cdc_record_outcome_columns, in its order.
select * from final  -- noqa: AM04
