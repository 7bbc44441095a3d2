{% macro _of_connector(rows, source_table, connector) %}
    {#- Only the tables of that name that the connector wrote: the same name can be another
        source's table with other columns. #}
    left semi join {{ ref('int_changes_aggregated_to_source_tables') }} as source_tables
        on
            {{ rows }}.source_db <=> source_tables.source_db
            and {{ rows }}.source_table = source_tables.source_table
            and source_tables.connector <=> {{ 'null' if connector is none else cdc_dbt.cdc_string_literal(connector) }}
    where {{ rows }}.source_table = {{ cdc_dbt.cdc_string_literal(source_table) }}
{% endmacro %}
