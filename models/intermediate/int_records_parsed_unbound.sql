{#
    Every landed record once, parsed on its own by the `cdc_parse_record` UDF (udfs/records.py)
    into one of three outcomes: a change, a counted ignore class, or a quarantine reason. Landing
    problems (a line that is no kcat record, bytes that are not text) are quarantined without
    parsing. Of a record delivered twice, the delivery of the first file by path is kept.

    A Qlik data message names its table only through its metadata message, so here it is held
    (`unknown_qlik_schema`); int_qlik_records_bound binds it. The UDF runs once per record: this
    table is read by the binding and by int_records_parsed, never parsed again.

    Incremental: a build parses the deliveries loaded since the newest one here, minus the records
    already here (a re-delivery, or a build that stopped half-way).
#}

with

deliveries as (

    select * from {{ ref('int_deliveries_loaded') }}
    where {{ cdc_is_newer_than_this('loaded_at') }}

),

new_records as (

    select * except (delivery_number)
    from (
        select
            deliveries.*,
            row_number() over (
                partition by deliveries.topic, deliveries.`partition`, deliveries.`offset`
                order by deliveries.landed_file, deliveries.landing_format
            ) as delivery_number
        from deliveries
        {{ cdc_not_yet_in_this('deliveries') }}
    )
    -- Lines without an identity are each their own record.
    where delivery_number = 1 or topic is null or `partition` is null or `offset` is null

),

records_parsed as (

    select
        *,
        if(
            landing_reason is null,
            cdc_parse_record(key, payload, `partition`, `offset`, topic),
            null
        ) as parsed
    from new_records

),

final as (

    select
        {{- cdc_record_outcome_columns() }}
    from records_parsed

)

select * from final
