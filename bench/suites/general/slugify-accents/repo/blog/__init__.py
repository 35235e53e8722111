"""A tiny blog engine: posts, slugs and URLs."""
