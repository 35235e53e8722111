"""Stepswitch: give each step of a coding task to the model that fits it."""

__version__ = "0.1.0"
