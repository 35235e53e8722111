"""Tools that look at the worktree without changing it: list_dir, find_files, search, read."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any

from stepswitch.agent.tools.base import FunctionTool, ToolResult, numbered, refuse, schema
from stepswitch.agent.workspace.paths import PathRefused, Workspace
from stepswitch.util.globs import glob_match
from stepswitch.util.safe_fs import Beneath, UnsafePath

LIST_LIMIT = 500
FIND_LIMIT = 500
SEARCH_LIMIT = 200
SEARCH_LINE_CHARS = 200
SEARCH_MAX_FILE_BYTES = 4_000_000
READ_MAX_LINES = 400
BINARY_SNIFF_BYTES = 8192  # a NUL byte among the first ones makes a file binary

# Walks skip these below the folder asked for: git's data, caches and installed dependencies.
SKIP_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)

_PATH = {"type": "string", "description": "Path relative to the repository root."}

# list_dir marks folders with "/" and links with "@" (as ls -F does); no tool follows a link.
_MARKS = {"folder": "/", "link": "@"}


ToolFunction = Callable[[Workspace, dict[str, Any]], ToolResult]


def refusing_links(fn: ToolFunction) -> ToolFunction:
    """fn with a link on its path (safe_fs never follows one) turned into a refusal that tells
    the model what to do, instead of an exception."""

    @functools.wraps(fn)
    def guarded(ws: Workspace, args: dict[str, Any]) -> ToolResult:
        try:
            return fn(ws, args)
        except UnsafePath as err:
            return refuse(str(PathRefused(str(args.get("path", ".")), err.why)))

    return guarded


def text_of(data: bytes) -> str:
    """data as read shows it: UTF-8, undecodable bytes replaced, \r\n and \r read as \n."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def text_lines(text: str) -> list[str]:
    """The file's lines without their endings; a final newline does not make an extra line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def missing(path: str, rel: str) -> ToolResult:
    """The refusal for a path that is not there."""
    return refuse(
        f"{path!r} does not exist in the repository. Use find_files (e.g. pattern "
        f"{'**/' + PurePosixPath(rel).name!r}) or list_dir to find the right path, then call again."
    )


def is_folder(found: os.stat_result) -> bool:
    return stat.S_ISDIR(found.st_mode)


def not_a_file(
    found: os.stat_result | None, path: str, rel: str, folder_advice: str
) -> ToolResult | None:
    """The refusal when path (rel in the tree, `found` its status) is missing or a folder, the
    latter saying "{path!r} is a folder" then `folder_advice`; None for a file."""
    if found is None:
        return missing(path, rel)
    if is_folder(found):
        return refuse(f"{path!r} is a folder{folder_advice}")
    return None


FileToolBody = Callable[[Workspace, Beneath, str, dict[str, Any]], ToolResult]


def on_one_file(folder_advice: str) -> Callable[[FileToolBody], ToolFunction]:
    """A tool on the one file its `path` names: the body gets the tree beneath the root, open,
    and the file's path in it; a missing path, or a folder (said with `folder_advice`), is
    refused first."""

    def wrap(body: FileToolBody) -> ToolFunction:
        @functools.wraps(body)
        def tool(ws: Workspace, args: dict[str, Any]) -> ToolResult:
            path: str = args["path"]
            rel = ws.lexical(path)
            with Beneath(ws.root) as tree:
                if (refusal := not_a_file(tree.stat(rel), path, rel, folder_advice)) is not None:
                    return refusal
                return body(ws, tree, rel, args)

        return tool

    return wrap


def in_glob(pattern: str, rel: str, base: str, base_is_folder: bool) -> bool:
    """Whether a file matches, the pattern taken relative to the searched folder or to the root."""
    if not base_is_folder:
        under_base = PurePosixPath(rel).name
    else:
        under_base = rel if base == "." else rel.removeprefix(base + "/")
    return glob_match(pattern, under_base) or glob_match(pattern, rel)


@refusing_links
def _list_dir(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    path = args.get("path", ".")
    rel = ws.lexical(path)
    with Beneath(ws.root) as tree:
        found = tree.stat(rel)
        if found is None:
            return missing(path, rel)
        if not is_folder(found):
            return refuse(f"{path!r} is a file, not a folder. Use read to see its contents.")
        entries = sorted(
            e.name + _MARKS.get(e.kind, "") for e in tree.entries(rel) if e.name != ".git"
        )
    shown = entries[:LIST_LIMIT]
    text = "\n".join(shown) if shown else "(empty folder)"
    if len(entries) > LIST_LIMIT:
        text += f"\n[{len(entries) - LIST_LIMIT} more entries not shown; use find_files to narrow]"
    return ToolResult(output=text)


# What a walk lists, from the tree, the files below `base` and whether `base` is a folder.
_Lister = Callable[[Beneath, Iterator[str], str, bool], Iterator[str]]


def _walk_listing(
    ws: Workspace, path: str, lister: _Lister, limit: int, none: str, stopped: str
) -> ToolResult:
    """The first `limit` lines `lister` gives for the files below path (SKIP_DIRS left out), one
    a line; `none` when it gives none, and a last line `[stopped]` when it had more."""
    base = ws.lexical(path)
    with Beneath(ws.root) as tree:
        top = tree.stat(base)
        if top is None:
            return missing(path, base)
        with contextlib.closing(tree.files(base, SKIP_DIRS)) as files:
            lines = list(itertools.islice(lister(tree, files, base, is_folder(top)), limit + 1))
    if not lines:
        return ToolResult(output=none)
    text = "\n".join(lines[:limit])
    if len(lines) > limit:
        text += f"\n[{stopped}]"
    return ToolResult(output=text)


@refusing_links
def _find_files(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    pattern: str = args["pattern"].strip()
    path = args.get("path", ".")
    if pattern.startswith("/"):
        return refuse(
            f"Pattern {pattern!r} is absolute. Give a pattern relative to the folder in path, "
            "e.g. pattern '**/*.py' with path 'src'."
        )
    return _walk_listing(
        ws,
        path,
        lambda tree, files, base, folder: (r for r in files if in_glob(pattern, r, base, folder)),
        FIND_LIMIT,
        f"No files match {pattern!r} under {path!r}.",
        f"stopped at {FIND_LIMIT} files; narrow the pattern or the path",
    )


def searchable_text(tree: Beneath, rel: str) -> str | None:
    """rel's text for search; None for a binary or oversized file, or one that changed since it
    was listed (now a link, a FIFO, or gone): search skips it."""
    try:
        handle = tree.open_file(rel)
    except (UnsafePath, OSError):
        return None
    with handle:
        if os.fstat(handle.fileno()).st_size > SEARCH_MAX_FILE_BYTES:
            return None
        head = handle.read(BINARY_SNIFF_BYTES)
        if b"\0" in head:
            return None
        return text_of(head + handle.read())


def matching_lines(tree: Beneath, files: Iterator[str], regex: re.Pattern[str]) -> Iterator[str]:
    """'path:line: text' for each line of the files that the regex matches, long lines cut."""
    for rel in files:
        text = searchable_text(tree, rel)
        for n, line in enumerate(text_lines(text or ""), start=1):
            if regex.search(line):
                cut = line[:SEARCH_LINE_CHARS] + (" [...]" if len(line) > SEARCH_LINE_CHARS else "")
                yield f"{rel}:{n}: {cut}"


@refusing_links
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
    return _walk_listing(
        ws,
        path,
        lambda tree, files, base, folder: matching_lines(
            tree, (r for r in files if not glob or in_glob(glob, r, base, folder)), regex
        ),
        SEARCH_LIMIT,
        f"No matches for {args['pattern']!r} under {path!r}.",
        f"stopped at {SEARCH_LIMIT} matches; narrow the pattern, the path or the glob",
    )


@refusing_links
@on_one_file(". Use list_dir to see it, then read one of its files.")
def _read(ws: Workspace, tree: Beneath, rel: str, args: dict[str, Any]) -> ToolResult:
    path: str = args["path"]
    with tree.open_file(rel) as handle:
        head = handle.read(BINARY_SNIFF_BYTES)
        if b"\0" in head:
            size = os.fstat(handle.fileno()).st_size
            return refuse(f"{path!r} is a binary file ({size} bytes); read shows text.")
        data = head + handle.read()
    lines = text_lines(text_of(data))
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
    "List a folder of the repository: sorted entries, folders end with '/', symbolic links "
    "with '@' (the file tools do not follow links).",
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
