"""One codec per wire format."""
