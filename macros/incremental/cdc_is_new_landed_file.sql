{% macro cdc_is_new_landed_file(files_already_read) %}
    {%- if files_already_read | length == 0 %}
        {{- return('true') -}}
    {%- endif %}
    {%- set literals = [] %}
    {%- for file in files_already_read %}
        {%- do literals.append(cdc_dbt.cdc_string_literal(file)) %}
    {%- endfor %}
    {{- return(cdc_dbt._landed_file_identity() ~ ' not in (' ~ literals | join(', ') ~ ')') -}}
{% endmacro %}
