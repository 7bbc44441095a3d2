{{ typed_current('inventory.products', 'postgresql', inventory_products_columns()) }}
