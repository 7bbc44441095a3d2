{#
    What a per-key generic test reads: the model, or with `generation_column` the rows of its
    newest generation (a row-state table).
#}
{% macro cdc_rows_to_check(test_name, model, generation_column=none) %}
    {%- if generation_column is none -%}
        {{- return(model) -}}
    {%- endif -%}
    {%- do cdc_dbt.cdc_check_name_arguments(test_name, {'generation_column': generation_column}) -%}
    {{- return(cdc_dbt.cdc_rows_of_newest_generation(model, generation_column)) -}}
{% endmacro %}
