{{ typed_history('shop.reviews', 'mongodb', shop_reviews_columns()) }}
