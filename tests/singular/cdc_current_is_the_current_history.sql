{#
    cdc_current (SCD1) and cdc_history (SCD2) are two views of the same sequence of events, so the
    current state must be exactly the current versions of the history: the same keys, each with
    the same row, op, source_ts (the version's valid_from) and sequence, and no key in one only.
    Returns every row found on one side and not the other (multiset difference, both ways).

    Checked for the keys the last build recomputed (the newest generation of
    int_row_events_versioned, which both views read); the builds before checked theirs. The keys
    are an IN predicate, which Spark moves below each view's window over the versions (a semi join
    on `<=>` it leaves above); a null source_db compares as '', which at worst checks a key more
    on both sides.
#}

with

keys_checked as (

    select
        coalesce(source_db, '') as source_db,
        source_table,
        row_key
    from {{ cdc_dbt.cdc_rows_of_newest_generation(ref('int_row_events_versioned')) }}

),

cdc_current as (

    select * from {{ ref('cdc_current') }}
    where (coalesce(source_db, ''), source_table, row_key) in (select * from keys_checked)  -- noqa: RF02

),

cdc_history as (

    select * from {{ ref('cdc_history') }}
    where (coalesce(source_db, ''), source_table, row_key) in (select * from keys_checked)  -- noqa: RF02

),

current_rows as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version,
        source_position
    from cdc_current

),

current_versions as (

    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        valid_from as source_ts,
        version,
        source_position
    from cdc_history
    where is_current

),

missing_from_current as (

    select * from current_versions
    except all
    select * from current_rows

),

missing_from_history as (

    select * from current_rows
    except all
    select * from current_versions

),

validation_errors as (

    select
        'a current version of cdc_history that cdc_current lacks' as difference,
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version,
        source_position
    from missing_from_current
    union all
    select
        'a row of cdc_current that is no current version of cdc_history' as difference,
        source_db,
        source_table,
        row_key,
        row,
        op,
        source_ts,
        version,
        source_position
    from missing_from_history

)

select * from validation_errors
