{{ typed_history('inventory.orders', inventory_orders_columns()) }}
