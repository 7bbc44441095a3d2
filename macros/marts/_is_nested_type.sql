{% macro _is_nested_type(data_type) %}
    {{ return(data_type.strip().lower().startswith(('array<', 'struct<', 'map<'))) }}
{% endmacro %}
