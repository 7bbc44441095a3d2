{#
    The columns of a row change, taken from int_records_parsed, in the one order every row event
    keeps: int_row_events_sequenced unions its row changes, the tombstone policy's delete events
    and its resolved events by position, so the three lists must never drift apart.
#}
{% macro cdc_row_change_columns(event_struct=none) %}
    {%- set columns = ['source_db', 'source_table', 'row_key'] %}
    {%- for column in [
        'op', 'after', 'unavailable_columns', 'patch', 'source_ts', 'source_position', 'topic',
        '`partition`', '`offset`',
    ] %}
        {%- do columns.append(column if event_struct is none else event_struct ~ '.' ~ column) %}
    {%- endfor %}
    {{- return(columns | join(',\n        ')) -}}
{% endmacro %}
