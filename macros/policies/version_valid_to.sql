{#
    Delete policy (docs/ordering-and-history.md#deletes), the other half of version_ended_by.sql:
    when a version ends. At the truncate's source_ts when its table's next truncate comes before
    the key's next event, else when the next event's version starts; null while it is current.
#}
{% macro version_valid_to(next_position, next_starts_at, truncate_position, truncate_ts, starts_at) %}
    {{ return(adapter.dispatch('version_valid_to', 'cdc_dbt')(
        next_position, next_starts_at, truncate_position, truncate_ts, starts_at
    )) }}
{% endmacro %}

{% macro default__version_valid_to(next_position, next_starts_at, truncate_position, truncate_ts, starts_at) %}
    case
        -- A truncate's time, kept between the version's start and the next version's: a
        -- version never ends before it starts nor after its successor starts.
        when {{ cdc_dbt._truncate_comes_first(next_position, truncate_position) }}
            then greatest({{ starts_at }}, least({{ truncate_ts }}, {{ next_starts_at }}))
        else {{ next_starts_at }}
    end
{% endmacro %}
