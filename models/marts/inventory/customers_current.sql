{{ typed_current('inventory.customers', 'postgresql', inventory_customers_columns()) }}
