{% macro _landed_file_identity() %}
    {{- return(
        "concat_ws('|', landed_file, cast(landed_file_size as string),"
        ~ " cast(unix_micros(landed_file_modified_at) as string))"
    ) -}}
{% endmacro %}
