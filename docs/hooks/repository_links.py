"""An mkdocs hook: a link from a page to a file of the repository outside docs/ (the code, an
evidence file, a bench folder) works on GitHub, where pages are read beside the code, but has no
page on the site. On the site it becomes the file's path from the repository's root, as code, after
the link's text (`evidence (claims/evidence/C-001.json)`), or a link to it under `repo_url` when
mkdocs.yml sets one. Links between pages are left to mkdocs, which checks them (`--strict`).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

# [text](target) outside code: a target with no scheme, no anchor-only, no spaces.
LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s:#]+)(#[^)\s]*)?\)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[^\n]*$", re.S | re.M)
CODE = re.compile(r"(`+)(?:(?!\n\s*\n).)+?(?<!`)\1(?!`)", re.S)


def outside(page: str, target: str) -> str | None:
    """The target's path from the repository's root when it lies outside docs/, else None."""
    joined = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page), target))
    if joined.startswith("../") or joined == "..":
        return None  # outside the repository: left to mkdocs, which says so
    return None if joined == "docs" or joined.startswith("docs/") else joined


def rewrite(markdown: str, page: str, repo_url: str | None) -> str:
    """The page's Markdown with every link to a file outside docs/ rewritten (code left alone)."""
    kept: list[str] = []

    def hide(m: re.Match[str]) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    def restore(text: str) -> str:
        while "\x00" in text:  # a code span inside a hidden fence: restore until none is left
            text = re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)
        return text

    def one(m: re.Match[str]) -> str:
        path = outside(page, m.group(2))
        if path is None:
            return m.group(0)
        text = restore(m.group(1))
        if repo_url:
            return f"[{text}]({repo_url.rstrip('/')}/blob/HEAD/{path})"
        return text if text.strip("`") == path else f"{text} (`{path}`)"

    return restore(LINK.sub(one, CODE.sub(hide, FENCE.sub(hide, markdown))))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return rewrite(markdown, page.file.src_uri, config.get("repo_url"))
