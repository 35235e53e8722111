"""User accounts: an in-memory repository and the services on top of it."""
