"""Text from a model, a command or a commit, made safe to print: a terminal acts on control
characters (ESC sequences retitle it, clear it, move the cursor; CR and backspace overwrite what
was shown), and bidi overrides make a line read differently from what it holds."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (a terminal may take U+009B as CSI), the
# bidi embeddings, overrides and isolates, and lone surrogates (no terminal encoding has them).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[{_CONTROLS}]")
_UNSAFE_OR_LAYOUT = re.compile(f"[\t\n{_CONTROLS}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_controls(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every control character shown as its escape, e.g. ESC as the four characters
    `\\x1b`, CR as `\\r`, U+202E as `\\u202e`. With `keep_newlines`, newlines and tabs stay as
    they are (a CR right before a newline is dropped: it moves nothing); without, they are
    escaped too, for one-line text. Backslashes are left alone, so the result is for reading,
    not for decoding back."""
    if keep_newlines:
        return _UNSAFE.sub(_escape, text.replace("\r\n", "\n"))
    return _UNSAFE_OR_LAYOUT.sub(_escape, text)


# What json.dumps and pydantic leave raw in a JSON text that a terminal acts on (both escape C0
# already): DEL, the C1 controls, the bidi embeddings, overrides and isolates; and the line and
# paragraph separators, which str.splitlines takes for line ends as it does U+0085.
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u2028-\u202e\u2066-\u2069]")


def escape_json_controls(json_text: str) -> str:
    """A JSON text with DEL, C1 and bidi controls (and U+2028, U+2029) written as `\\uXXXX`
    escapes: it loads back to the same value, and a file of it shown by `cat`, `less` or `grep`
    cannot drive the terminal or reorder a line. Outside its strings JSON is ASCII, so every one
    replaced is inside a string, where the escape means the character itself."""
    return _RAW_IN_JSON.sub(lambda char: f"\\u{ord(char.group()):04x}", json_text)


def first_line(text: str) -> str:
    """The first line of `text` that holds anything, stripped ("" when none does)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
