{#
    The fields of the demo's MongoDB collection shop.reviews (cdc_dbt/generate_other_sources.py),
    one place for its _current and _history marts. `tags` and `votes` are read as the nested
    types they are.
#}

{% macro shop_reviews_columns() %}
    {{ return([
        {'source': '_id', 'name': 'review_id', 'data_type': 'string'},
        {'source': 'product_id', 'name': 'product_id', 'data_type': 'bigint'},
        {'source': 'rating', 'name': 'rating', 'data_type': 'int'},
        {'source': 'text', 'name': 'review_text', 'data_type': 'string'},
        {'source': 'tags', 'name': 'tags', 'data_type': 'array<string>'},
        {'source': 'votes', 'name': 'votes', 'data_type': 'struct<up: int, down: int>'},
    ]) }}
{% endmacro %}
