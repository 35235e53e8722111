"""The docs site's pages, as the claims engine sees them (ADR 0066).

Every Markdown file under docs/ is a page of the site (mkdocs.yml at the root). `ssw prove`
renders the claim markers of each page that holds one, as it renders the README's, but for the
decision records: a record (docs/decisions/) shows the markers' syntax as examples, and keeps the
figures it was decided on only in measured notes (claims/measured.py); what the project claims
today is a claim, rendered from evidence on the README or a page. Which files are linted is
claims/shipped.py's rule (ADR 0077): every page, records too.
"""

from __future__ import annotations

from pathlib import Path

from stepswitch.claims import readme
from stepswitch.claims.shipped import markdown_text

DOCS = "docs"
RECORDS = "docs/decisions/"  # dated records: never rendered


def read_pages(root: Path) -> dict[str, str]:
    """Every page's text but the records', by its path from the root (`docs/bench.md`), in path
    order. A page that is not UTF-8 is exit 2 naming it; links are not followed."""
    pages = {}
    for path in sorted((root / DOCS).rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(RECORDS) or path.is_symlink() or not path.is_file():
            continue
        pages[rel] = markdown_text(path, rel)
    return pages


def holds_markers(text: str) -> bool:
    """Whether `ssw prove` renders anything in this page: a claim marker or a claims index."""
    return bool(readme.MARKER.search(text) or readme.INDEX.search(text))


__all__ = ["DOCS", "RECORDS", "holds_markers", "read_pages"]
