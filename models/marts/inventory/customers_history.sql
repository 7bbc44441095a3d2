{{ typed_history('inventory.customers', inventory_customers_columns()) }}
