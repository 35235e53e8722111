import re

_NOT_WORD = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """'Hello, World!' -> 'hello-world'."""
    return _NOT_WORD.sub("-", title.lower()).strip("-")
