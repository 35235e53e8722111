"""The repository's Python files (`python_files`: environments, caches and build output
skipped) and the imports one file's source makes (`_parse_source`): only the lines that start an
import statement are parsed with `ast` (a file whose snippets do not parse is parsed whole),
and literal `import_module("x")` / `__import__("x")` names count too. impacted.py builds its
graph from them."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

from stepswitch.util.python_ast import parse_python

# Folder names never read, wherever they are.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "__pycache__",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ssw",
        ".eggs",
        "site-packages",
    }
)
# Folder names skipped only at the repository root: elsewhere they can be real packages.
SKIP_TOP_DIRS = frozenset({"build", "dist", "htmlcov"})

_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t]+\w)", re.M)
_DYNAMIC = re.compile(rb"""(?:import_module|__import__)\(\s*["']([\w.]+)["']""")


def python_files(root: Path) -> list[str]:
    """Every .py file under root as a sorted relative posix path, skipping environments and
    caches (any folder holding a `pyvenv.cfg` counts as an environment)."""
    found: list[str] = []
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if prefix and any(e.name == "pyvenv.cfg" for e in entries):
            continue
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name in SKIP_DIRS or name.endswith(".egg-info"):
                        continue
                    if not prefix and name in SKIP_TOP_DIRS:
                        continue
                    stack.append((Path(entry.path), f"{prefix}{name}/"))
                elif name.endswith(".py") and entry.is_file():
                    found.append(prefix + name)
            except OSError:
                continue
    return sorted(found)


@dataclass(frozen=True)
class _Parsed:
    # Absolute imports as written (level 0), and relative ones as (level, module or "", names).
    absolute: frozenset[str]
    relative: tuple[tuple[int, str, tuple[str, ...]], ...]


def _imports_of(tree: ast.AST) -> _Parsed:
    absolute: set[str] = set()
    relative: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            absolute.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names if alias.name != "*")
            if node.level == 0 and node.module:
                absolute.add(node.module)
                absolute.update(f"{node.module}.{n}" for n in names)
            elif node.level > 0:
                relative.append((node.level, node.module or "", names))
    return _Parsed(frozenset(absolute), tuple(relative))


def _statement_end(data: bytes, start: int) -> int:
    """End of the import statement starting at `start`: one line, or until its parentheses close,
    or through backslash continuations."""
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    line = data[start:end]
    if b"(" in line and b")" not in line:
        close = data.find(b")", end)
        return len(data) if close < 0 else close + 1
    while line.rstrip().endswith(b"\\") and end < len(data):
        nxt = data.find(b"\n", end + 1)
        nxt = len(data) if nxt < 0 else nxt
        line = data[end + 1 : nxt]
        end = nxt
    return end


def _parse_source(data: bytes) -> _Parsed:
    """Parse the import statements of one file; fall back to the whole file if a snippet fails."""
    absolute: set[str] = set()
    relative: list[tuple[int, str, tuple[str, ...]]] = []
    try:
        for match in _IMPORT_LINE.finditer(data):
            snippet = data[match.start() : _statement_end(data, match.start())].strip()
            parsed = _imports_of(parse_python(snippet))
            absolute |= parsed.absolute
            relative.extend(parsed.relative)
    except (SyntaxError, ValueError):
        try:
            return _with_dynamic(_imports_of(parse_python(data)), data)
        except (SyntaxError, ValueError):
            pass  # a file that does not parse still counts, with the imports its snippets showed
    return _with_dynamic(_Parsed(frozenset(absolute), tuple(relative)), data)


def _with_dynamic(parsed: _Parsed, data: bytes) -> _Parsed:
    # importlib.import_module("pkg.mod") and __import__("pkg.mod") with a literal name.
    found = {m.group(1).decode() for m in _DYNAMIC.finditer(data)}
    return _Parsed(parsed.absolute | found, parsed.relative) if found else parsed
