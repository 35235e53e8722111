"""Unit conversions for optical spectroscopy."""
