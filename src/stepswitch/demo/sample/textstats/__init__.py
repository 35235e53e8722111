"""Small text statistics."""
