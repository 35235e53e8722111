"""Routing policies: the policy model, the router and `ssw policy check`."""
