{{ typed_history('inventory.orders', 'postgresql', inventory_orders_columns()) }}
