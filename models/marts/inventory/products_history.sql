{{ typed_history('inventory.products', 'postgresql', inventory_products_columns()) }}
