"""Provider presets, list prices, their refresh, and the models table."""
