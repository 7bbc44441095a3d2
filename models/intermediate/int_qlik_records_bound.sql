{#
    The Qlik data messages int_records_parsed_unbound held (`unknown_qlik_schema`: a data message
    names its table and column ordinals only through its metadata message), parsed a second time
    with that message by the `cdc_parse_qlik_record` UDF (docs/message-formats.md#qlik-replicate):
    - an enveloped data message binds to the metadata message whose `schemaId` equals its
      `messageSchemaId`;
    - a bare data message names no schema: it binds to a metadata message of its topic whose
      column names are the keys of its `data` (and `beforeData`); among those, the newest below
      it in its partition, else the earliest (partition, offset). Table versions differ in their
      columns (a DDL change adds, drops or renames one), so after a DDL change each bare message
      still finds its own version, whatever order the files land in.
    A data message whose metadata has not landed stays held, and is bound by the build its
    metadata lands in, whichever order they arrive in.
    This model is the rule's definition. `cdc-dbt scaffold`, which reads landed files without
    Spark, binds by its Python twin (udfs/qlik_binding.py); tests/unit/test_qlik_binding.py holds
    that to this model's unit tests (_int_qlik_records_bound__unit_tests.yml), on the same rows.

    Incremental (append): a build binds the held messages not bound here yet.
#}

{{ config(tblproperties=cdc_parsed_record_table_properties()) }}

with

unbound_records as (

    select * from {{ ref('int_records_parsed_unbound') }}

),

qlik_metadata_messages as (

    select
        qlik_schema_id,
        topic,
        `partition`,
        `offset`,
        payload as metadata_payload,
        -- Enveloped (`message.tableStructure`) or bare (`tableStructure`).
        {{ cdc_json_key_set([
            "coalesce(get_json_object(payload, '$.message.tableStructure.tableColumns'),"
            ~ " get_json_object(payload, '$.tableStructure.tableColumns'))"
        ]) }} as column_names
    from unbound_records
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

held_records_ever as (

    select * from unbound_records
    where reason = 'unknown_qlik_schema'

),

held_records as (

    select held_records_ever.*
    from held_records_ever
    {{ cdc_not_yet_in_this('held_records_ever') }}

),

bare_records as (

    select
        topic,
        `partition`,
        `offset`,
        {{ cdc_json_key_set([
            "get_json_object(payload, '$.data')",
            "get_json_object(payload, '$.beforeData')",
        ]) }} as column_names
    from held_records
    where qlik_schema_id is null

),

bare_record_metadata_candidates as (

    select
        bare.topic,
        bare.`partition`,
        bare.`offset`,
        metadata.metadata_payload,
        metadata.`partition` as metadata_partition,
        metadata.`offset` as metadata_offset,
        (
            metadata.`partition` = bare.`partition`
            and metadata.`offset` < bare.`offset`
        ) as is_metadata_below
    from bare_records as bare
    inner join qlik_metadata_messages as metadata
        on
            bare.topic = metadata.topic
            and bare.column_names = metadata.column_names

),

bare_record_metadata_preferences as (

    select
        topic,
        `partition`,
        `offset`,
        metadata_payload,
        -- The rule above as one ordering: the smallest wins (the same ordering as `preference`
        -- in udfs/qlik_binding.py, which the scaffold binds by).
        struct(
            not is_metadata_below as is_not_below,
            if(is_metadata_below, -metadata_offset, 0) as newest_below_first,
            metadata_partition,
            metadata_offset
        ) as preference
    from bare_record_metadata_candidates

),

qlik_metadata_by_bare_record as (

    select
        topic,
        `partition`,
        `offset`,
        min_by(metadata_payload, preference) as metadata_payload
    from bare_record_metadata_preferences
    group by topic, `partition`, `offset`

),

records_bound as (

    -- The held record's columns by name: cdc_record_outcome_columns takes the landed record's
    -- from them, and `parsed` replaces its first parse. Only the held rows with metadata reach
    -- the UDF: a Python UDF sees every row of its batch whatever an `if` around it says.
    select
        held.*,
        cast(null as string) as landing_reason,
        cast(null as string) as landing_detail,
        cdc_parse_qlik_record(
            held.payload,
            coalesce(by_schema_id.metadata_payload, by_columns.metadata_payload),
            held.`partition`,
            held.`offset`
        ) as parsed
    from held_records as held
    left join qlik_metadata_by_schema_id as by_schema_id
        on held.qlik_schema_id = by_schema_id.qlik_schema_id
    left join qlik_metadata_by_bare_record as by_columns
        on
            held.qlik_schema_id is null
            and held.topic = by_columns.topic
            and held.`partition` = by_columns.`partition`
            and held.`offset` = by_columns.`offset`
    where coalesce(by_schema_id.metadata_payload, by_columns.metadata_payload) is not null

),

final as (

    select
        {{- cdc_record_outcome_columns() }}
    from records_bound

)

select * from final
