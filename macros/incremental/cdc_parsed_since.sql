{#
    A predicate on `parsed_at`: the record was parsed by a build after the one that wrote
    `generation` (a generation is its build's start, and so is the `parsed_at` of what it parsed).
#}
{% macro cdc_parsed_since(generation) %}
    {{- return('parsed_at > timestamp_micros(' ~ generation ~ ')') -}}
{% endmacro %}
