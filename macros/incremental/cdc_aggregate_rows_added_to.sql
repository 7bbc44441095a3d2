{#
    The rows of an aggregate's table (cdc_aggregate_config) this build adds its records to: all of
    them when it adds (`generation` is the one it builds on), none when it computes the aggregate
    from every record (a relation like `like`, empty).
#}
{% macro cdc_aggregate_rows_added_to(generation, like) %}
    {%- if generation is none %}
        {{- return('select * from ' ~ like ~ ' where false') -}}
    {%- endif %}
    {{- return('select * from ' ~ this) -}}
{% endmacro %}
