{# Whether a truncate ends a version: the one condition version_ended_by and version_valid_to share. #}
{% macro _truncate_comes_first(next_position, truncate_position) %}
    ({{ truncate_position }} is not null
        and ({{ next_position }} is null or {{ truncate_position }} < {{ next_position }}))
{% endmacro %}
