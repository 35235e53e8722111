"""Application settings: defaults, then a settings file, then APP_* environment variables."""

from appconf.loader import ConfigValueError, load

__all__ = ["ConfigValueError", "load"]
