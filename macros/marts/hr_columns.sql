{#
    The columns of the demo's Qlik Replicate table HR.EMPLOYEES (cdc_dbt/generate_other_sources.py),
    one place for its _current and _history marts. DEPARTMENT came with table version 2: rows
    that predate it hold null.
#}

{% macro hr_employees_columns() %}
    {{ return([
        {'source': 'EMPLOYEE_ID', 'name': 'employee_id', 'data_type': 'int'},
        {'source': 'FIRST_NAME', 'name': 'first_name', 'data_type': 'string'},
        {'source': 'LAST_NAME', 'name': 'last_name', 'data_type': 'string'},
        {'source': 'SALARY', 'name': 'salary', 'data_type': 'decimal(10,2)'},
        {'source': 'HIRE_DATE', 'name': 'hire_date', 'data_type': 'date'},
        {'source': 'DEPARTMENT', 'name': 'department', 'data_type': 'string'},
    ]) }}
{% endmacro %}
