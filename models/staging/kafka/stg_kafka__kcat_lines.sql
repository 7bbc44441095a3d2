{#
    Lines stay text here: Spark forbids a persistent view that calls a session (UDF) function,
    so the kcat record is parsed in int_deliveries_loaded, a table.
#}

with

source as (

    select
        value as landed_line,
        _metadata.file_path as landed_file,
        _metadata.file_size as landed_file_size,
        _metadata.file_modification_time as landed_file_modified_at
    from {{ source('landing', 'kcat_json_lines') }}

),

final as (

    select
        landed_line,
        landed_file,
        landed_file_size,
        landed_file_modified_at,
        'kcat_json' as landing_format
    from source
    -- kcat ends files with a newline; blank lines carry no record.
    where trim(landed_line) != ''

)

select * from final
