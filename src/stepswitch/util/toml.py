"""TOML files: read one the user names (or refuse it in one line). Every TOML ssw reads goes
through parse_toml, which bounds how deep a document nests (ADR 0046); a TOML file as a pydantic
model is util/config_model.load_model's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from stepswitch.errors import ConfigError
from stepswitch.util.inputs import read_text_input

# Far above any real file; far below where tomllib (which parses an array or an inline table by
# recursion) or a recursive reader of what it returns would run out of stack.
MAX_TOML_DEPTH = 100

# What the bound's scan stops at, and the strings and comments it skips whole (a string that
# does not end here ends tomllib's parse there too, so the scan stops with it).
_SPECIAL = re.compile(r"""["'#\[\]{}=,\n.]""")
_SKIPPED = re.compile(
    r"""\#[^\n]*|"{3}(?:[^\\]|\\.)*?"{3,5}|"(?:[^"\\\n]|\\.)*"|'{3}.*?'{3,5}|'[^'\n]*'""",
    re.DOTALL,
)


class TomlTooDeep(tomllib.TOMLDecodeError):
    """A TOML document nested deeper than MAX_TOML_DEPTH: refused as a syntax error is, so every
    reader's handling of a malformed file (one line naming it, or the file ignored) applies."""

    def __init__(self, why: str) -> None:
        ValueError.__init__(self, why)  # tomllib's own constructor wants a document and position


def parse_toml(text: str) -> dict[str, Any]:
    """tomllib.loads, refusing (TomlTooDeep) a document nested deeper than MAX_TOML_DEPTH.
    Brackets and braces are counted before parsing: tomllib recurses once per level, and a
    RecursionError caught afterwards depends on how deep the caller already is. So are the parts
    of a dotted key (tomllib's time grows with their square); headers and dotted keys together
    are bounded on the table parsed."""
    _check_nesting(text)
    data = tomllib.loads(text)
    _check_depth(data)
    return data


def _check_nesting(text: str) -> None:
    depth = dots = 0
    pos = 0
    while (found := _SPECIAL.search(text, pos)) is not None:
        char, pos = found.group(), found.end()
        if char in "\"'#":
            skipped = _SKIPPED.match(text, found.start())
            if skipped is None:
                return  # a string that never ends: tomllib refuses the document there
            pos = skipped.end()  # a quoted part of a dotted key is still one of its parts
        elif char == ".":
            dots += 1
            if dots >= MAX_TOML_DEPTH:
                raise TomlTooDeep(f"a key of more than {MAX_TOML_DEPTH} parts{_at(text, found)}")
        else:
            dots = 0
            if char in "[{":
                depth += 1
                if depth > MAX_TOML_DEPTH:
                    raise TomlTooDeep(
                        f"nested deeper than {MAX_TOML_DEPTH} levels{_at(text, found)}"
                    )
            elif char in "]}":
                depth = max(depth - 1, 0)


def _at(text: str, token: re.Match[str]) -> str:
    return f" (at line {text.count(chr(10), 0, token.start()) + 1})"


def _check_depth(data: dict[str, Any]) -> None:
    stack: list[tuple[object, int]] = [(data, 0)]  # the document itself is no level
    while stack:
        value, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise TomlTooDeep(f"nested deeper than {MAX_TOML_DEPTH} levels")
        if isinstance(value, dict):
            stack += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]


def read_toml(path: Path, what: str, fix: str) -> dict[str, Any]:
    """The TOML table in `path`; a ConfigError naming the file for anything but a TOML file."""
    text = read_text_input(path, what, fix)
    try:
        return parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "(syntax)", str(exc), "fix the TOML syntax") from exc
