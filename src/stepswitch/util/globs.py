"""Globs over root-relative posix paths, shared by the tools and the gates."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob over posix paths: `**` spans folders, `*` and `?` stay inside one."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(pattern: str, rel_path: str) -> bool:
    """Whether a root-relative posix path matches; a pattern without "/" matches base names."""
    pattern = pattern.strip().removeprefix("./")
    if "/" not in pattern:
        return glob_regex(pattern).match(PurePosixPath(rel_path).name) is not None
    return glob_regex(pattern.strip("/")).match(rel_path) is not None
