{{ typed_current('inventory.customers', inventory_customers_columns()) }}
