{#
    Whether some row of `relation` that meets `condition` was parsed since `generation`: one
    count, before the model's SQL is written, for a rule that changes what a build recomputes.
#}
{% macro cdc_any_parsed_since(relation, condition, generation) %}
    {%- if not execute %}
        {{- return(false) -}}
    {%- endif %}
    {%- set count = run_query(
        'select count(*) from ' ~ relation ~ ' where ' ~ condition ~ ' and ' ~ cdc_dbt.cdc_parsed_since(generation)
    ).columns[0].values()[0] %}
    {{- return(count > 0) -}}
{% endmacro %}
