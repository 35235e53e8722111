"""Modules an `ssw` process leaves out: imported by libraries ssw uses, for features ssw never
uses (ADR 0042). A None entry in `sys.modules` is Python's documented way to make one import
fail; each library here wraps that import in `try/except ImportError` and goes on without it.
Only in ssw's own processes (the command, its bench workers): a program that uses Stepswitch
as a library keeps its imports as they come."""

from __future__ import annotations

import sys

UNUSED = (
    # httpx's command-line client: rich's console and progress, click, pygments (~60 ms).
    "httpx._main",
    # httpcore's trio backend, when trio is installed (selenium brings it): ~100 ms of each
    # process that makes an HTTP client; ssw's clients are synchronous.
    "trio",
)


def leave_out_unused_imports() -> None:
    """Before the libraries are imported; a module imported already stays."""
    for name in UNUSED:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
