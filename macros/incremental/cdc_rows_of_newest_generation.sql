{#
    The rows of `relation` in its newest generation, as a derived table: the keys the last build
    recomputed, each with all its rows (a build recomputes a key from all its events). What the
    per-key data tests check, so that a build checks what it wrote; earlier builds checked theirs.
    The maximum is a subquery Spark evaluates before it lists the table's files, so only that
    generation's partition is read.
#}
{% macro cdc_rows_of_newest_generation(relation, generation_column='generation') %}
    {%- set generation = cdc_dbt.cdc_quote_identifier(generation_column) -%}
    {{- return(
        '(select * from ' ~ relation ~ ' where ' ~ generation ~ ' = (select max(' ~ generation ~ ') from '
        ~ relation ~ ')) as newest_generation'
    ) -}}
{%- endmacro %}
