"""Small shared helpers: globs, the secret-free environment, prefix length, processes."""
