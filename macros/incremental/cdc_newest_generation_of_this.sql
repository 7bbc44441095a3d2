{# The newest generation in this model's table; none while it is empty. #}
{% macro cdc_newest_generation_of_this() %}
    {{- return(run_query('select max(generation) from ' ~ this).columns[0].values()[0]) -}}
{% endmacro %}
