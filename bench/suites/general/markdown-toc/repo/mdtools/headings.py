import re
from dataclasses import dataclass

_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


def parse_headings(text: str) -> list[Heading]:
    """ATX headings (`# Title`) outside fenced code blocks, in document order."""
    found: list[Heading] = []
    fence: str | None = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if opened:
            marker = opened.group(1)
            fence = None if fence == marker else (fence or marker)
            continue
        if fence:
            continue
        match = _ATX.match(line)
        if match:
            found.append(Heading(len(match.group(1)), match.group(2)))
    return found
