{{ typed_current('shop.reviews', 'mongodb', shop_reviews_columns()) }}
