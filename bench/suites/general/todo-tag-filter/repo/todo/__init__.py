"""A todo list kept in a JSON file, with #tags in titles."""
