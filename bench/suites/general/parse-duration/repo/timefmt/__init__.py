"""Human-readable durations."""

from timefmt.format import format_duration

__all__ = ["format_duration"]
