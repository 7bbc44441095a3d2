{#
    A predicate keeping the rows of `relation` newer than the newest `column` in this model's
    table ('true' on a full build). The bound is a literal, so Parquet statistics skip the files
    of older builds.
#}
{% macro cdc_is_newer_than_this(column) %}
    {%- if not cdc_dbt.cdc_reads_this() %}
        {{- return('true') -}}
    {%- endif %}
    {%- set newest = run_query(
        'select cast(unix_micros(max(' ~ column ~ ')) as string) from ' ~ this
    ).columns[0].values()[0] %}
    {{- return('true' if newest is none else column ~ ' > timestamp_micros(' ~ newest ~ ')') -}}
{% endmacro %}
