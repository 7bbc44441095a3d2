{#
    The columns of the demo's source tables (the Debezium tutorial's `inventory` schema), one
    place for both the _current and the _history mart of each table. `source` is the column name
    in the row JSON, `name` the mart's column name, `data_type` a Spark SQL type; the YAML
    contracts of the marts declare the same types and dbt checks that they agree.
#}

{% macro inventory_customers_columns() %}
    {{ return([
        {'source': 'id', 'name': 'customer_id', 'data_type': 'int'},
        {'source': 'first_name', 'name': 'first_name', 'data_type': 'string'},
        {'source': 'last_name', 'name': 'last_name', 'data_type': 'string'},
        {'source': 'email', 'name': 'email', 'data_type': 'string'},
        {'source': 'updated_at', 'name': 'updated_at', 'data_type': 'timestamp'},
    ]) }}
{% endmacro %}

{% macro inventory_products_columns() %}
    {{ return([
        {'source': 'id', 'name': 'product_id', 'data_type': 'int'},
        {'source': 'name', 'name': 'product_name', 'data_type': 'string'},
        {'source': 'description', 'name': 'description', 'data_type': 'string'},
        {'source': 'weight', 'name': 'weight', 'data_type': 'double'},
        {'source': 'price', 'name': 'price', 'data_type': 'decimal(10,2)'},
    ]) }}
{% endmacro %}

{% macro inventory_orders_columns() %}
    {{ return([
        {'source': 'id', 'name': 'order_id', 'data_type': 'int'},
        {'source': 'order_date', 'name': 'order_date', 'data_type': 'date'},
        {'source': 'purchaser', 'name': 'purchaser_id', 'data_type': 'int'},
        {'source': 'quantity', 'name': 'quantity', 'data_type': 'int'},
        {'source': 'product_id', 'name': 'product_id', 'data_type': 'int'},
    ]) }}
{% endmacro %}
