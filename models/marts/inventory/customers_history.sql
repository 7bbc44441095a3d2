{{ typed_history('inventory.customers', 'postgresql', inventory_customers_columns()) }}
