"""A small shop: catalog, bulk discounts, VAT and carts."""
