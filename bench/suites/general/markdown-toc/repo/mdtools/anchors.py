import re

_DROP = re.compile(r"[^\w\- ]")


def anchor(text: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return _DROP.sub("", text.strip().lower()).replace(" ", "-")


def unique_anchors(texts: list[str]) -> list[str]:
    """Anchors for headings in order; repeats get -1, -2, ... as GitHub does."""
    seen: dict[str, int] = {}
    out = []
    for text in texts:
        base = anchor(text)
        count = seen.get(base, 0)
        out.append(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return out
