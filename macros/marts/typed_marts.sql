{#
    Typed marts: the JSON `row` of cdc_current / cdc_history as typed columns, one mart per
    source table. A mart names its source table and its columns (`source_columns`); the row JSON
    is parsed once per row with from_json (every field read as text, so numbers keep their exact
    digits) and each field cast to its declared type with try_cast: a value that does not fit
    becomes null in the mart while the raw row stays in cdc_current / cdc_history.
#}

{% macro typed_current(source_table, columns) %}
with

current_rows as (

    select * from {{ ref('cdc_current') }}
    where source_table = {{ cdc_string_literal(source_table) }}

),

parsed as (

    select
        source_db,
        row_key,
        op,
        source_ts,
        from_json(row, {{ cdc_string_literal(_row_struct_type(columns)) }}) as row_values
    from current_rows

),

final as (

    select
        source_db,
        row_key,
        {{ _typed_row_columns('row_values', columns) }},
        op as last_op,
        source_ts as last_changed_ts
    from parsed

)

select * from final
{% endmacro %}

{% macro typed_history(source_table, columns) %}
with

history_rows as (

    select * from {{ ref('cdc_history') }}
    where source_table = {{ cdc_string_literal(source_table) }}

),

parsed as (

    select
        source_db,
        row_key,
        version,
        valid_from,
        valid_to,
        is_current,
        ended_by,
        from_json(row, {{ cdc_string_literal(_row_struct_type(columns)) }}) as row_values
    from history_rows

),

final as (

    select
        source_db,
        row_key,
        version,
        {{ _typed_row_columns('row_values', columns) }},
        valid_from,
        valid_to,
        is_current,
        ended_by
    from parsed

)

select * from final
{% endmacro %}

{% macro _row_struct_type(columns) %}
    {%- set fields = [] -%}
    {%- for column in columns -%}
        {%- do fields.append(cdc_quote_identifier(column.source) ~ ': string') -%}
    {%- endfor -%}
    {{ return('struct<' ~ fields | join(', ') ~ '>') }}
{% endmacro %}

{% macro _typed_row_columns(struct_column, columns) %}
    {%- for column in columns -%}
        try_cast({{ struct_column }}.{{ cdc_quote_identifier(column.source) }} as {{ column.data_type }})
        as {{ cdc_quote_identifier(column.name) }}{{ ',' if not loop.last }}
    {% endfor -%}
{% endmacro %}
