{#- The typed mart a data test is attached to: its graph node (an empty one at parse time, when
    the graph is empty and only the test's refs matter). #}
{% macro _typed_mart_of_test(model, test_name) %}
    {%- set marts = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('alias', 'equalto', model.identifier) | list) if execute else [] -%}
    {%- if execute and marts | length != 1 -%}
        {{ exceptions.raise_compiler_error(test_name ~ ': no single model for ' ~ model) }}
    {%- endif -%}
    {{- return(marts[0] if marts else {'name': '', 'columns': {}, 'config': {'meta': {}}}) -}}
{% endmacro %}
