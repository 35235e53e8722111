"""Tools that change files: edit (replace one exact text) and write_file (whole file)."""

from __future__ import annotations

import difflib
import functools
import re
from typing import Any

from stepswitch.agent.tools.base import FunctionTool, ToolResult, numbered, refuse, schema
from stepswitch.agent.tools.files import (
    ToolFunction,
    is_folder,
    on_one_file,
    refusing_links,
    text_lines,
)
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.util.safe_fs import Beneath

# read shows each line as f"{n:>6}\t{line}"; models often copy that prefix into edit.
READ_PREFIX_RE = re.compile(r"^ *\d+\t")

_SNIPPET_LINES = 12


def load(tree: Beneath, rel: str) -> str:
    # surrogateescape gives back bytes that are not UTF-8 as they were; CRLF stays as it is.
    with tree.open_file(rel) as handle:
        return handle.read().decode("utf-8", errors="surrogateescape")


def save(tree: Beneath, rel: str, text: str, *, make_folders: bool = False) -> bool:
    """Write text atomically, never through a link; whether the file was there before."""
    data = text.encode("utf-8", errors="surrogateescape")
    return tree.write(rel, data, make_folders=make_folders)


def refusing_protected(fn: ToolFunction) -> ToolFunction:
    """fn refused, before it looks at any file, when its path is one this step may not change."""

    @functools.wraps(fn)
    def guarded(ws: Workspace, args: dict[str, Any]) -> ToolResult:
        path: str = args["path"]
        pattern = ws.protected_by(ws.lexical(path))
        if pattern is None:
            return fn(ws, args)
        return refuse(
            f"{path!r} is protected (pattern {pattern!r}): this step may not change it. "
            "Leave it as it is and change other files, such as the code it checks, instead."
        )

    return guarded


def carries_read_prefixes(text: str) -> bool:
    lines = text_lines(text)
    return bool(lines) and all(READ_PREFIX_RE.match(line) for line in lines)


def strip_read_prefixes(text: str) -> str:
    return "".join(READ_PREFIX_RE.sub("", line, count=1) for line in text.splitlines(True))


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _not_found(path: str, text: str, old: str) -> ToolResult:
    lines = text_lines(text)
    wanted = next((line.strip() for line in text_lines(old) if line.strip()), "")
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.6) if wanted else []
    fix = (
        "Read the file again and copy old exactly as it is now, with its indentation and "
        "without the line numbers read shows."
    )
    if not close:
        return refuse(f"old was not found in {path!r}. {fix}")
    at = stripped.index(close[0])
    first = max(0, at - 2)
    snippet = numbered(lines[first : first + _SNIPPET_LINES], first + 1)
    return refuse(
        f"old was not found in {path!r}; the closest text is near line {at + 1}. {fix}\n{snippet}"
    )


@refusing_links
@refusing_protected
@on_one_file("; edit changes one file. Use list_dir to pick a file.")
def _edit(ws: Workspace, tree: Beneath, rel: str, args: dict[str, Any]) -> ToolResult:
    path: str = args["path"]
    old: str = args["old"]
    new: str = args["new"]
    if not old:
        return refuse(
            "old is empty. Copy the exact text to replace from read's output; "
            "to create a file or replace all of it, use write_file."
        )
    text = load(tree, rel)
    if old not in text and carries_read_prefixes(old):
        old = strip_read_prefixes(old)
        new = strip_read_prefixes(new) if carries_read_prefixes(new) else new
    if old not in text and "\r\n" in text and "\r" not in old:  # a CRLF file edited with "\n"
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = text.count(old)
    if count == 0:
        return _not_found(path, text, old)
    if count > 1:
        starts = [m.start() for m in re.finditer(re.escape(old), text)][:10]
        where = ", ".join(str(_line_of(text, i)) for i in starts)
        return refuse(
            f"old matches {count} places in {path!r} (lines {where}). Include more of the "
            "surrounding lines in old so that it matches exactly one place."
        )
    if old == new:
        return refuse("old and new are the same, so nothing would change. Send the new text.")
    at = text.index(old)
    updated = text.replace(old, new, 1)
    save(tree, rel, updated)
    first = _line_of(text, at)
    new_lines = text_lines(updated)[first - 1 :]
    shown = new_lines[: min(len(text_lines(new)) or 1, _SNIPPET_LINES)]
    summary = (
        f"Edited {rel}: replaced {len(text_lines(old))} line(s) at line {first} "
        f"with {len(text_lines(new))} line(s). Now:"
    )
    return ToolResult(output=f"{summary}\n{numbered(shown, first)}", changed_paths=(rel,))


@refusing_links
@refusing_protected
def _write_file(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    path: str = args["path"]
    content: str = args["content"]
    rel = ws.lexical(path)
    with Beneath(ws.root) as tree:
        found = tree.stat(rel)
        if found is not None and is_folder(found):
            return refuse(
                f"{path!r} is a folder. Give the path of a file to write, e.g. {path}/x.py."
            )
        existed = save(tree, rel, content, make_folders=True)
    verb = "Overwrote" if existed else "Created"
    return ToolResult(
        output=f"{verb} {rel} ({len(text_lines(content))} lines).", changed_paths=(rel,)
    )


_PATH = {"type": "string", "description": "File path relative to the repository root."}

EDIT = FunctionTool(
    "edit",
    "Replace one exact piece of a file: old must match the file's current text exactly once "
    "(copy it from read, without the line numbers); it becomes new.",
    schema(
        {
            "path": _PATH,
            "old": {"type": "string", "description": "Exact current text, matching once."},
            "new": {"type": "string", "description": "Text to put in its place."},
        },
        ("path", "old", "new"),
    ),
    _edit,
    aliases={
        "file_path": "path",
        "old_text": "old",
        "old_str": "old",
        "old_string": "old",
        "new_text": "new",
        "new_str": "new",
        "new_string": "new",
    },
)
WRITE_FILE = FunctionTool(
    "write_file",
    "Create a file or replace all of its content; missing folders are created.",
    schema(
        {"path": _PATH, "content": {"type": "string", "description": "The whole new content."}},
        ("path", "content"),
    ),
    _write_file,
    aliases={"file_path": "path", "text": "content"},
)
