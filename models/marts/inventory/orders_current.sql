{{ typed_current('inventory.orders', inventory_orders_columns()) }}
