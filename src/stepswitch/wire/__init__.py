"""The wire layer: normalized types, one codec per wire format, and the HTTP client."""
