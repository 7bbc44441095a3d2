{#
    The Qlik data messages int_records_decoded held (`unknown_qlik_schema`: a data message names
    its table and column ordinals only through its metadata message), parsed a second time with
    that message by the `cdc_parse_qlik_record` UDF (docs/message-formats.md#qlik-replicate):
    - an enveloped data message binds to the metadata message whose `schemaId` equals its
      `messageSchemaId`;
    - a bare data message names no schema: it binds to its topic's metadata when the topic has
      exactly one `schemaId`.
    A data message whose metadata has not landed stays held, and is bound by the build its
    metadata lands in, whichever order they arrive in.

    Incremental (append): a build binds the held messages not bound here yet.
#}

{{
    config(
        materialized='incremental',
        incremental_strategy='append',
    )
}}

with

decoded_records as (

    select * from {{ ref('int_records_decoded') }}

),

qlik_metadata_messages as (

    select
        qlik_schema_id,
        topic,
        `partition`,
        `offset`,
        payload as metadata_payload
    from decoded_records
    where ignore_class = 'metadata_message'

),

qlik_metadata_by_schema_id as (

    -- Replicate republishes a table version's metadata (each task start): any copy will do.
    select
        qlik_schema_id,
        min_by(metadata_payload, struct(topic, `partition`, `offset`)) as metadata_payload
    from qlik_metadata_messages
    group by qlik_schema_id

),

qlik_metadata_by_topic as (

    select
        topic,
        min_by(metadata_payload, struct(`partition`, `offset`)) as metadata_payload
    from qlik_metadata_messages
    group by topic
    having count(distinct qlik_schema_id) = 1

),

held_records as (

    select held.*
    from decoded_records as held
    {% if cdc_reads_this() %}
        left anti join {{ this }} as bound
            on
                held.topic = bound.topic
                and held.`partition` = bound.`partition`
                and held.`offset` = bound.`offset`
    {% endif %}
    where held.reason = 'unknown_qlik_schema'

),

records_bound as (

    -- Only the held rows with metadata reach the UDF: a Python UDF sees every row of its batch
    -- whatever an `if` around it says.
    select
        held.topic,
        held.`partition`,
        held.`offset`,
        held.kafka_ts,
        held.headers,
        held.key,
        held.payload,
        held.landed_file,
        held.landing_format,
        held.loaded_at,
        cast(null as string) as landing_reason,
        cast(null as string) as landing_detail,
        cdc_parse_qlik_record(
            held.payload,
            coalesce(by_schema_id.metadata_payload, by_topic.metadata_payload),
            held.`partition`,
            held.`offset`
        ) as parsed
    from held_records as held
    left join qlik_metadata_by_schema_id as by_schema_id
        on held.qlik_schema_id = by_schema_id.qlik_schema_id
    left join qlik_metadata_by_topic as by_topic
        on held.qlik_schema_id is null and held.topic = by_topic.topic
    where coalesce(by_schema_id.metadata_payload, by_topic.metadata_payload) is not null

),

final as (

    select
        {{- cdc_record_outcome_columns() }}
    from records_bound

)

select * from final
