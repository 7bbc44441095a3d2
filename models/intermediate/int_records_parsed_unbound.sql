{#
    Every landed record once, parsed on its own by the `cdc_parse_record` UDF (udfs/records.py)
    into one of three outcomes: a change, a counted ignore class, or a quarantine reason. Landing
    problems (a line that is no kcat record, bytes that are not text) are quarantined without
    parsing. Of a record delivered twice, the delivery of the first file by path is kept: the
    identities delivered more than once are found from their three columns, and only their
    deliveries are ranked, so the wide rows of the rest are never shuffled.

    A key or payload landed as bytes (`is_key_base64`, `is_payload_base64`: Avro in a Schema
    Registry's wire format) is parsed from its bytes, its schema fetched from the registry.

    A Qlik data message names its table only through its metadata message, so here it is held
    (`unknown_qlik_schema`); int_qlik_records_bound binds it. A record whose schema the registry
    could not give (`schema_registry_unavailable`, `no_schema_registry`) is held too, with its
    bytes; int_avro_records_retried parses it again in each later build until it can. Otherwise
    the UDF runs once per record: this table is read by the binding and by int_records_parsed.

    Incremental: a build parses the deliveries loaded since the newest one here, minus the records
    already here (a re-delivery, or a build that stopped half-way). Those are dropped once, from
    the records kept: the plan reads the deliveries in each branch of their union, and a join
    before it would be made in each.
#}

{{ config(tblproperties=cdc_parsed_record_table_properties()) }}

with

deliveries as (

    select * from {{ ref('int_deliveries_loaded') }}
    where {{ cdc_is_newer_than_this('loaded_at') }}

),

-- Found from the three narrow identity columns alone: a window over every delivery would shuffle
-- and sort whole rows, payload included, to find what is almost always a few re-deliveries.
-- Broadcast to the deliveries, so that their wide rows stay where they were read.
identities_delivered_again as (

    select
        topic,
        `partition`,
        `offset`
    from deliveries
    where topic is not null and `partition` is not null and `offset` is not null
    group by topic, `partition`, `offset`
    having count(*) > 1

),

deliveries_marked as (

    select /*+ broadcast(identities_delivered_again) */
        deliveries.*,
        identities_delivered_again.topic is not null as is_delivered_again
    from deliveries
    left join identities_delivered_again
        on
            deliveries.topic = identities_delivered_again.topic
            and deliveries.`partition` = identities_delivered_again.`partition`
            and deliveries.`offset` = identities_delivered_again.`offset`

),

-- Lines without an identity are each their own record.
records_delivered_once as (

    select * except (is_delivered_again)
    from deliveries_marked
    where not is_delivered_again

),

deliveries_of_the_others_ranked as (

    select
        *,
        row_number() over (
            partition by topic, `partition`, `offset`
            order by landed_file, landing_format
        ) as delivery_number
    from deliveries_marked
    where is_delivered_again

),

first_deliveries_of_the_others as (

    select * except (is_delivered_again, delivery_number)
    from deliveries_of_the_others_ranked
    where delivery_number = 1

),

first_deliveries as (

    select * from records_delivered_once
    union all
    select * from first_deliveries_of_the_others

),

new_records as (

    select first_deliveries.*
    from first_deliveries
    {{ cdc_not_yet_in_this('first_deliveries') }}

),

records_parsed as (

    select
        *,
        if(
            landing_reason is null,
            cdc_parse_record(
                key, payload, `partition`, `offset`, topic, is_key_base64, is_payload_base64
            ),
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
