{{ typed_current('inventory.orders', 'postgresql', inventory_orders_columns()) }}
