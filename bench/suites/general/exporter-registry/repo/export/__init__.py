"""Export lists of records (dicts with the same keys) as text."""
