"""Each file's added and deleted lines counted from a diff ssw already has (a review's `git
diff` between two object ids, kept by util/git_tree.py), as `git diff --numstat --no-renames`
counts them: the run's line counts without a second git process (issue 48,
docs/decisions/0089-the-runs-commit-without-commit-tree.md).

Only a patch read whole is counted: sections named `a/P b/P`, the extended headers of a file
added, deleted or with its mode changed, hunks that hold the lines their headers announce, and
`Binary files ... differ` (no counts, as numstat's `-`). Anything else (a rename or copy git
found, a file that became a link, which the patch shows as two sections and numstat as one
comparison, a submodule shown as a log, prefixes other than `a/` and `b/`) is None: git counts
then.
"""

from __future__ import annotations

import re

Counts = tuple[str, int | None, int | None]  # (path, lines added, lines deleted); None: binary

_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_HEADERS = ("old mode ", "new mode ", "deleted file mode ", "new file mode ", "index ")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def numstat(patch: str) -> list[Counts] | None:
    """What `--numstat --no-renames` says of the change `patch` shows (`git diff`'s text,
    decoded with surrogateescape); None when the patch holds anything this does not read."""
    lines = patch.split("\n")  # only git's line ends: a line may hold \r, \f, U+2028
    if lines[-1] == "":
        lines.pop()
    counts: list[Counts] = []
    at = 0
    while at < len(lines):
        read = _section(lines, at)
        if read is None:
            return None
        entry, at = read
        counts.append(entry)
    if len({name for name, _, _ in counts}) < len(counts):
        return None  # a path deleted and added: a type change, which numstat counts as one diff
    return counts


def _section(lines: list[str], at: int) -> tuple[Counts, int] | None:
    """One file's section from `lines[at]` (its `diff --git` line): its counts and where the
    next one starts."""
    name = _name(lines[at])
    if name is None:
        return None
    at += 1
    while at < len(lines) and lines[at].startswith(_HEADERS):
        at += 1
    if at < len(lines) and lines[at].startswith("Binary files ") and lines[at].endswith(" differ"):
        return (name, None, None), at + 1
    if at + 1 < len(lines) and lines[at].startswith("--- ") and lines[at + 1].startswith("+++ "):
        at += 2
    added = deleted = 0
    while at < len(lines) and not lines[at].startswith("diff --git "):
        hunk = _HUNK.match(lines[at])
        if hunk is None:
            return None
        old, new = (int(n) if n is not None else 1 for n in hunk.groups())
        at += 1
        while old or new or (at < len(lines) and lines[at].startswith("\\")):
            if at >= len(lines):
                return None
            mark = lines[at][:1]
            if mark in ("", " ") and old and new:  # context (an empty one: no space written)
                old, new = old - 1, new - 1
            elif mark == "-" and old:
                old, deleted = old - 1, deleted + 1
            elif mark == "+" and new:
                new, added = new - 1, added + 1
            elif mark != "\\":  # `\ No newline at end of file`
                return None
            at += 1
    return (name, added, deleted), at


def _name(line: str) -> str | None:
    """The path of a `diff --git a/P b/P` line (quoted as git quotes an unusual name); None for
    any other line, or two different paths (a rename)."""
    if not line.startswith("diff --git "):
        return None
    rest = line[len("diff --git ") :]
    if rest.startswith('"'):
        first = _unquote(rest)
        if first is None:
            return None
        old, used = first
        second = _unquote(rest[used + 1 :]) if rest[used : used + 1] == " " else None
        if second is None or used + 1 + second[1] != len(rest):
            return None
        new = second[0]
    else:
        half = (len(rest) - 1) // 2  # `a/P b/P`: the same path twice, a space between
        if rest[half : half + 1] != " ":
            return None
        old, new = rest[:half], rest[half + 1 :]
    if old[:2] != "a/" or new[:2] != "b/" or old[2:] != new[2:]:
        return None
    return old[2:]


def _unquote(text: str) -> tuple[str, int] | None:
    """The name a C-quoted string at the start of `text` spells (git's quote_c_style: octal
    bytes, the usual escapes), and how many characters it took; None when it is not one."""
    raw = bytearray()
    at = 1
    while at < len(text):
        char = text[at]
        if char == '"':
            return raw.decode("utf-8", "surrogateescape"), at + 1
        if char != "\\":
            raw += char.encode("utf-8", "surrogateescape")
            at += 1
            continue
        code = text[at + 1 : at + 4]
        if len(code) == 3 and all(c in "01234567" for c in code):
            raw.append(int(code, 8))
            at += 4
        elif text[at + 1 : at + 2] in _ESCAPES:
            raw.append(_ESCAPES[text[at + 1]])
            at += 2
        else:
            return None
    return None
