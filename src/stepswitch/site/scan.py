"""What must never be on a published page: strings shaped like keys (refused: the page is not
written) and absolute paths of this machine (said, since a record may quote them honestly, e.g. a
run with --sandbox none). Nothing is removed silently."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

# (what it looks like, the pattern, whether it is matched on ASCII-lowered text). Every pattern
# starts with a literal, so each is one fast pass even over a page of tens of megabytes.
SECRET_SHAPES: tuple[tuple[str, re.Pattern[bytes], bool], ...] = (
    ("an API key (sk-...)", re.compile(rb"sk-[A-Za-z0-9_-]{16,}"), False),
    ("a Google API key", re.compile(rb"AIza[0-9A-Za-z_-]{30,}"), False),
    ("a GitHub token", re.compile(rb"gh[pousr]_[A-Za-z0-9]{30,}"), False),
    ("a bearer token", re.compile(rb"bearer\s+[a-z0-9._~+/=-]{16,}"), True),
    *(
        (
            "a key assignment (key=...)",
            re.compile(word + rb"[\"']?\s*[=:]\s*[\"']?[a-z0-9._~+/-]{12,}"),
            True,
        )
        for word in (
            rb"api[_-]?key",
            rb"secret[_-]?key",
            rb"access[_-]?token",
            rb"auth[_-]?token",
            rb"password",
        )
    ),
)


def _starts_a_word(text: bytes, at: int) -> bool:
    return at == 0 or not text[at - 1 : at].isalnum()  # OPENAI_API_KEY=... still counts


def secret_shapes(text: str) -> list[tuple[str, int]]:
    """Each kind of secret-shaped string in `text` with where it first is (never the string)."""
    raw = text.encode("utf-8", "replace")
    lowered = raw.lower()  # ASCII only, and fast
    found: list[tuple[str, int]] = []
    for kind, pattern, fold in SECRET_SHAPES:
        haystack = lowered if fold else raw
        if any(kind == k for k, _ in found):
            continue
        at = next(
            (m.start() for m in pattern.finditer(haystack) if _starts_a_word(haystack, m.start())),
            None,
        )
        if at is not None:
            found.append((kind, len(raw[:at].decode("utf-8", "replace"))))
    return found


def machine_folders() -> list[str]:
    """Folders of this machine a page should not mention: the home folder and the temp folder."""
    found = {str(Path.home()), tempfile.gettempdir()}
    return sorted(f for f in found if f not in ("", "/"))


def machine_paths(text: str, extra: list[str] | tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """Which of this machine's folders (and `extra` ones) appear in `text`, and first where."""
    folders = dict.fromkeys([*machine_folders(), *extra])
    return [(f, text.find(f)) for f in folders if len(f) > 1 and f in text]
