{#
    Delete policy (docs/ordering-and-history.md#deletes): how a version ends. The version an event
    started ends at whichever comes first of the key's next event and its table's next truncate:
    - a truncate first: ended_by 't' at the truncate's source_ts;
    - else the next event: 'd' when it is a delete (whatever its before image holds: a key-only
      before image of REPLICA IDENTITY DEFAULT is a full delete), 'u' when it replaces the row;
    - neither: the version is current (ended_by and valid_to null).
#}
{% macro version_ended_by(next_op, next_position, truncate_position) %}
    {{ return(adapter.dispatch('version_ended_by', 'cdc_dbt')(next_op, next_position, truncate_position)) }}
{% endmacro %}

{% macro default__version_ended_by(next_op, next_position, truncate_position) %}
    case
        when {{ cdc_dbt._truncate_comes_first(next_position, truncate_position) }} then 't'
        when {{ next_op }} = 'd' then 'd'
        when {{ next_op }} is not null then 'u'
    end
{% endmacro %}
