{{ typed_history('inventory.products', inventory_products_columns()) }}
