{{ typed_current('inventory.products', inventory_products_columns()) }}
