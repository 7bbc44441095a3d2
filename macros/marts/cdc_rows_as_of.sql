{#
    Every row as it was at a source time, from cdc_history's windows: each key's version whose
    [valid_from, valid_to) holds `at`. A row deleted or truncated before `at` is absent, one made
    after it too. For a query (`cdc-dbt show --inline "{{ cdc_rows_as_of('2026-03-01 12:00:00') }}"`)
    or a model of yours; `source_table` narrows it to one table.
#}
{% macro cdc_rows_as_of(at, source_table=none) %}
    select
        source_db,
        source_table,
        row_key,
        row,
        op,
        version,
        valid_from,
        valid_to
    from {{ ref('cdc_history') }}
    where
        valid_from <= cast({{ cdc_dbt.cdc_string_literal(at) }} as timestamp)
        and (valid_to is null or valid_to > cast({{ cdc_dbt.cdc_string_literal(at) }} as timestamp))
        {%- if source_table is not none %}
        and source_table = {{ cdc_dbt.cdc_string_literal(source_table) }}
        {%- endif %}
{% endmacro %}
