{# The time this build started, the same for every model of the build: the stamp of its rows. #}
{% macro cdc_build_started_at() %}
    {{- return('timestamp_micros(' ~ (run_started_at.timestamp() * 1000000) | int ~ ')') -}}
{% endmacro %}
