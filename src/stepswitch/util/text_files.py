"""A file's text when it is there, for what ssw reads but can do without: a runner's report the
command may never have written, a `.pth` file, a source file read for its imports."""

from __future__ import annotations

import os


def text_or_empty(path: str | os.PathLike[str]) -> str:
    """The file's text (bytes that are not UTF-8 replaced); "" when it cannot be read (missing,
    a folder, no permission)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""
