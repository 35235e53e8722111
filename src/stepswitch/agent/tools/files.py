"""Tools that look at the worktree without changing it: list_dir, find_files, search, read."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stepswitch.agent.tools.base import FunctionTool, ToolResult, numbered, refuse, schema
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.util.globs import glob_match

LIST_LIMIT = 500
FIND_LIMIT = 500
SEARCH_LIMIT = 200
SEARCH_LINE_CHARS = 200
SEARCH_MAX_FILE_BYTES = 4_000_000
READ_MAX_LINES = 400

# Walks skip these below the folder asked for: git's data, caches and installed dependencies.
SKIP_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)

_PATH = {"type": "string", "description": "Path relative to the repository root."}


def is_binary(real: Path) -> bool:
    with real.open("rb") as handle:
        return b"\0" in handle.read(8192)


def text_lines(text: str) -> list[str]:
    """The file's lines without their endings; a final newline does not make an extra line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def missing(path: str, real: Path) -> ToolResult | None:
    """The refusal for a path that is not there, or None when it exists."""
    if real.exists():
        return None
    return refuse(
        f"{path!r} does not exist in the repository. Use find_files (e.g. pattern "
        f"{'**/' + real.name!r}) or list_dir to find the right path, then call again."
    )


def in_glob(ws: Workspace, pattern: str, real: Path, base: Path) -> bool:
    """Whether a file matches, the pattern taken relative to the searched folder or to the root."""
    under_base = real.relative_to(base).as_posix() if base.is_dir() else real.name
    return glob_match(pattern, under_base) or glob_match(pattern, ws.relative(real))


def walk_files(base: Path) -> Iterator[Path]:
    """Files under base in sorted order, skipping SKIP_DIRS and not following folder links."""
    if base.is_file():
        yield base
        return
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            yield Path(folder, name)


def _list_dir(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    path = args.get("path", ".")
    real = ws.resolve(path)
    if (refusal := missing(path, real)) is not None:
        return refusal
    if not real.is_dir():
        return refuse(f"{path!r} is a file, not a folder. Use read to see its contents.")
    entries = sorted(
        (e.name + "/" if e.is_dir() else e.name) for e in real.iterdir() if e.name != ".git"
    )
    shown = entries[:LIST_LIMIT]
    text = "\n".join(shown) if shown else "(empty folder)"
    if len(entries) > LIST_LIMIT:
        text += f"\n[{len(entries) - LIST_LIMIT} more entries not shown; use find_files to narrow]"
    return ToolResult(output=text)


def _find_files(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    pattern: str = args["pattern"].strip()
    path = args.get("path", ".")
    if pattern.startswith("/"):
        return refuse(
            f"Pattern {pattern!r} is absolute. Give a pattern relative to the folder in path, "
            "e.g. pattern '**/*.py' with path 'src'."
        )
    base = ws.resolve(path)
    if (refusal := missing(path, base)) is not None:
        return refusal
    found: list[str] = []
    more = False
    for real in walk_files(base):
        if in_glob(ws, pattern, real, base):
            if len(found) == FIND_LIMIT:
                more = True
                break
            found.append(ws.relative(real))
    if not found:
        return ToolResult(output=f"No files match {pattern!r} under {path!r}.")
    text = "\n".join(found)
    if more:
        text += f"\n[stopped at {FIND_LIMIT} files; narrow the pattern or the path]"
    return ToolResult(output=text)


def _search(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    path = args.get("path", ".")
    glob: str | None = args.get("glob")
    try:
        regex = re.compile(args["pattern"])
    except re.error as err:
        return refuse(
            f"Invalid regular expression {args['pattern']!r}: {err}. Send a Python regex; "
            "escape special characters such as ( [ . * + ? with a backslash to match them as text."
        )
    base = ws.resolve(path)
    if (refusal := missing(path, base)) is not None:
        return refusal
    hits: list[str] = []
    more = False
    for real in walk_files(base):
        rel = ws.relative(real) if real.resolve().is_relative_to(ws.root) else None
        if rel is None or not real.is_file():  # a link leading out of the repository stays unread
            continue
        if glob and not in_glob(ws, glob, real, base):
            continue
        if real.stat().st_size > SEARCH_MAX_FILE_BYTES or is_binary(real):
            continue
        text = real.read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(text_lines(text), start=1):
            if regex.search(line):
                if len(hits) == SEARCH_LIMIT:
                    more = True
                    break
                cut = line[:SEARCH_LINE_CHARS] + (" [...]" if len(line) > SEARCH_LINE_CHARS else "")
                hits.append(f"{rel}:{n}: {cut}")
        if more:
            break
    if not hits:
        return ToolResult(output=f"No matches for {args['pattern']!r} under {path!r}.")
    out = "\n".join(hits)
    if more:
        out += f"\n[stopped at {SEARCH_LIMIT} matches; narrow the pattern, the path or the glob]"
    return ToolResult(output=out)


def _read(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    path: str = args["path"]
    real = ws.resolve(path)
    if (refusal := missing(path, real)) is not None:
        return refusal
    if real.is_dir():
        return refuse(f"{path!r} is a folder. Use list_dir to see it, then read one of its files.")
    if is_binary(real):
        return refuse(f"{path!r} is a binary file ({real.stat().st_size} bytes); read shows text.")
    lines = text_lines(real.read_text(encoding="utf-8", errors="replace"))
    if not lines:
        return ToolResult(output=f"({path} is empty)")
    start = max(1, int(args.get("start_line", 1)))
    end = len(lines) if args.get("end_line") is None else min(int(args["end_line"]), len(lines))
    if start > len(lines):
        return refuse(f"{path!r} has {len(lines)} lines; ask for a start_line up to {len(lines)}.")
    if end < start:
        return refuse(f"end_line {end} is before start_line {start}; ask for a range like 1-100.")
    end = min(end, start + READ_MAX_LINES - 1)
    shown: list[str] = []
    used = 0
    for line in lines[start - 1 : end]:
        row_chars = 8 + len(line)  # six digits, a tab, the line, a newline
        if shown and used + row_chars > ws.output_cap_chars:
            break
        if row_chars > ws.output_cap_chars:  # one huge line (minified code): show its start only
            line = line[: ws.output_cap_chars - 40] + " [line cut]"
        used += row_chars
        shown.append(line)
    last = start + len(shown) - 1
    text = numbered(shown, start)
    if last < len(lines):
        text += (
            f"\n[lines {start}-{last} of {len(lines)} shown; "
            f"call read with start_line={last + 1} to read on]"
        )
    return ToolResult(output=text)


LIST_DIR = FunctionTool(
    "list_dir",
    "List a folder of the repository: sorted entries, folders end with '/'.",
    schema(
        {"path": {**_PATH, "description": "Folder relative to the repository root (default '.')."}}
    ),
    _list_dir,
)
FIND_FILES = FunctionTool(
    "find_files",
    "Find files by glob under a folder; '**' spans folders, a pattern without '/' matches file "
    "names at any depth. Returns paths relative to the repository root.",
    schema(
        {
            "pattern": {"type": "string", "description": "Glob, e.g. '**/*.py' or 'test_*.py'."},
            "path": {**_PATH, "description": "Folder to search under (default '.')."},
        },
        ("pattern",),
    ),
    _find_files,
)
SEARCH = FunctionTool(
    "search",
    "Search text files for a Python regular expression (use (?i) to ignore case). "
    "Prints 'path:line: text' for each matching line.",
    schema(
        {
            "pattern": {"type": "string", "description": "Python regular expression."},
            "path": {**_PATH, "description": "File or folder to search (default '.')."},
            "glob": {"type": "string", "description": "Only files matching it, e.g. '*.py'."},
        },
        ("pattern",),
    ),
    _search,
)
READ = FunctionTool(
    "read",
    f"Read a text file, each line shown after its number and a tab; at most {READ_MAX_LINES} "
    "lines per call. The numbers are not part of the file: leave them out of edit.",
    schema(
        {
            "path": _PATH,
            "start_line": {"type": "integer", "description": "First line, from 1 (default 1)."},
            "end_line": {"type": "integer", "description": "Last line, inclusive (default: end)."},
        },
        ("path",),
    ),
    _read,
    aliases={"file_path": "path"},
)
