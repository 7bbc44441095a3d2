{#
    The records int_records_parsed_unbound held because the Schema Registry could not give their
    schema (`schema_registry_unavailable`: it did not answer; `no_schema_registry`: none was
    configured), parsed again from the bytes they were held with by the `cdc_parse_held_record`
    UDF (`cdc_parse_record` declared nondeterministic: Spark parses each row once, whatever
    filters its result) (docs/message-formats.md#avro-with-a-schema-registry). A record is kept here once its parse no
    longer waits for the registry: a change, an ignored record, or a quarantine for good (an
    unknown schema id, bytes that do not decode). One that still waits stays out, and the next
    build asks again; int_records_parsed puts these rows in place of the held ones, so a build
    after the registry is back gives the tables a full refresh would.

    Incremental (append): a build retries the held records not kept here yet. While none is held
    (the registry answered, or no topic is Avro), the UDF gets no rows.
#}

{{ config(tblproperties=cdc_parsed_record_table_properties()) }}

with

unbound_records as (

    select * from {{ ref('int_records_parsed_unbound') }}

),

held_records_ever as (

    select * from unbound_records
    where reason in {{ cdc_registry_retry_reasons() }}

),

held_records as (

    select held_records_ever.*
    from held_records_ever
    {{ cdc_not_yet_in_this('held_records_ever') }}

),

records_retried as (

    -- The held record's columns by name: cdc_record_outcome_columns takes the landed record's
    -- from them (its key and payload as held: the base64 of their bytes), and `parsed` replaces
    -- its first parse.
    select
        *,
        cast(null as string) as landing_reason,
        cast(null as string) as landing_detail,
        cdc_parse_held_record(
            key, payload, `partition`, `offset`, topic, is_key_base64, is_payload_base64
        ) as parsed
    from held_records

),

final as (

    select
        {{- cdc_record_outcome_columns() }}
    from records_retried
    where parsed.reason is null or parsed.reason not in {{ cdc_registry_retry_reasons() }}

)

select * from final
