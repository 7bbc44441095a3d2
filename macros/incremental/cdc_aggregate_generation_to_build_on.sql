{#
    The newest generation of an aggregate's table (cdc_aggregate_config), whose records this
    build adds to: none when the build computes the aggregate from every record instead. That is a
    full build, an empty table or one built before it had generations, and the first build after
    a `cdc-dbt forget` (an erasure in `erasures` since that generation): forget removes parsed
    records, and what they added to a count or a first-seen time cannot be taken back.
#}
{% macro cdc_aggregate_generation_to_build_on(erasures) %}
    {%- if not cdc_dbt.cdc_reads_this() %}
        {{- return(none) -}}
    {%- endif %}
    {%- if 'generation' not in adapter.get_columns_in_relation(this) | map(attribute='name') | list %}
        {{- return(none) -}}
    {%- endif %}
    {%- set generation = cdc_dbt.cdc_newest_generation_of_this() %}
    {%- if generation is none %}
        {{- return(none) -}}
    {%- endif %}
    {%- set erased_since = run_query(
        'select count(*) from ' ~ erasures ~ ' where forgotten_ts > timestamp_micros(' ~ generation ~ ')'
    ).columns[0].values()[0] %}
    {{- return(none if erased_since > 0 else generation) -}}
{% endmacro %}
