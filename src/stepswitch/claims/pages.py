"""The docs site's pages, as the claims engine sees them (ADR 0066).

Every Markdown file under docs/ is a page of the site (mkdocs.yml at the root). `ssw prove`
renders the claim markers of each page that holds one, as it renders the README's, and lints the
numbers of every page, but for the decision records: a record (docs/decisions/) is dated and keeps
the figures it was decided on as they were written then, like a commit message, and shows the
markers' syntax as examples; what the project claims today is a claim, rendered from evidence on
the README or a page.
"""

from __future__ import annotations

from pathlib import Path

from stepswitch.claims import readme
from stepswitch.errors import ConfigError

DOCS = "docs"
RECORDS = "docs/decisions/"  # dated records: their figures are history, kept as written


def read_pages(root: Path) -> dict[str, str]:
    """Every page's text but the records', by its path from the root (`docs/bench.md`), in path
    order. A page that is not UTF-8 is exit 2 naming it; links are not followed."""
    pages = {}
    for path in sorted((root / DOCS).rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(RECORDS) or path.is_symlink() or not path.is_file():
            continue
        try:
            pages[rel] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ConfigError(rel, "its text", "is not UTF-8") from None
    return pages


def holds_markers(text: str) -> bool:
    """Whether `ssw prove` renders anything in this page: a claim marker or a claims index."""
    return bool(readme.MARKER.search(text) or readme.INDEX.search(text))


__all__ = ["DOCS", "RECORDS", "holds_markers", "read_pages"]
