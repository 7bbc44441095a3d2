{#
    The keys of one or more JSON objects (SQL expressions of JSON text) as one canonical text: the
    sorted, distinct names as a JSON array, comparable with `=`. A null or non-object text adds
    no key.
#}
{% macro cdc_json_key_set(json_object_expressions) %}
    {%- set key_arrays = [] -%}
    {%- for expression in json_object_expressions -%}
        {%- do key_arrays.append('coalesce(json_object_keys(' ~ expression ~ '), cast(array() as array<string>))') -%}
    {%- endfor -%}
    to_json(array_sort(array_distinct(concat({{ key_arrays | join(', ') }}))))
{%- endmacro %}
