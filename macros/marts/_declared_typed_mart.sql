{% macro _declared_typed_mart() %}
    {#- At parse time the YAML is not attached yet: the refs are what matter then. #}
    {%- if not execute %}
        {{- return(['', '', []]) -}}
    {%- endif %}
    {%- set meta = config.get('meta') or {} %}
    {%- set columns = cdc_dbt._declared_row_columns(model.columns, model.name) %}
    {%- if not meta.get('cdc_source_table') or 'cdc_connector' not in meta or not columns %}
        {{- exceptions.raise_compiler_error(
            'typed mart ' ~ model.name ~ ': its YAML must set config.meta.cdc_source_table,'
            ~ ' config.meta.cdc_connector and, on each column read from the row, data_type and meta.cdc_field'
        ) -}}
    {%- endif %}
    {{- return([meta['cdc_source_table'], meta['cdc_connector'], columns]) -}}
{% endmacro %}
