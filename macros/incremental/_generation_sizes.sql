{# (generation, row count) of each generation of this model's table, oldest first. Parquet footers answer it. #}
{% macro _generation_sizes() %}
    {%- set sizes = run_query(
        'select generation, count(*) from ' ~ this ~ ' group by generation order by generation'
    ) %}
    {{- return(sizes.rows | map('list') | list) -}}
{% endmacro %}
