"""The `ssw` command: one module per command group; render.py makes the terminal text."""

from stepswitch.cli.app import app, main

__all__ = ["app", "main"]
