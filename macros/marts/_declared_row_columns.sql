{#- The columns of a model's YAML that read a field of the row JSON, in their order. #}
{% macro _declared_row_columns(yaml_columns, mart_name) %}
    {%- set columns = [] %}
    {%- for column in yaml_columns.values() %}
        {%- set field = (column.get('meta') or {}).get('cdc_field')
            or ((column.get('config') or {}).get('meta') or {}).get('cdc_field') %}
        {%- if field is not none %}
            {%- if not column.get('data_type') %}
                {{- exceptions.raise_compiler_error(
                    'typed mart ' ~ mart_name ~ ': column ' ~ column.name ~ ' reads ' ~ field ~ ' but has no data_type'
                ) -}}
            {%- endif %}
            {%- do columns.append({'source': field, 'name': column.name, 'data_type': column.data_type}) %}
        {%- endif %}
    {%- endfor %}
    {{- return(columns) -}}
{% endmacro %}
