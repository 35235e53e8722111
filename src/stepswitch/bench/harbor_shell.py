"""Reading a Harbor task's scripts without running them (ADR 0037): logical lines, shell words,
requirements, and paths kept inside their folder; `Refused` says why a task cannot be taken."""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath


class Refused(Exception):
    """A Harbor task this importer cannot take, and why."""


_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(==[A-Za-z0-9.+!_-]+)?$")
# What ssw runs the tests with already, or only reports results another way.
_NOT_REQUIRED = {"pytest", "pytest-json-ctrf"}


def logical_lines(text: str) -> list[str]:
    """Lines with backslash continuations joined, comments and blank lines left out."""
    lines, held = [], ""
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            held += raw.rstrip()[:-1] + " "
            continue
        line = (held + raw).strip()
        held = ""
        if line and not line.startswith("#"):
            lines.append(line)
    if held.strip():
        lines.append(held.strip())
    return lines


def split_words(line: str, where: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise Refused(f"{where}: cannot read {line!r}: {exc}") from None


def requirement(spec: str, where: str) -> str | None:
    """`spec` as a requirement ssw keeps, None for pytest and the like; else refused."""
    named = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec)
    if named and named[0].lower().replace("_", "-") in _NOT_REQUIRED:
        return None  # whatever version: ssw's own pytest runs the tests
    if not _REQUIREMENT.match(spec):
        raise Refused(f"{where}: requirement {spec!r} is not a name or name==version")
    return spec


def file_inside(folder: Path, rel: str, where: str) -> Path:
    path = (folder / rel).resolve()
    if not path.is_relative_to(folder.resolve()) or not path.exists():
        raise Refused(f"{where}: {rel!r} is not a file of its folder")
    return path


def relative(root: PurePosixPath, dest: PurePosixPath, where: str) -> PurePosixPath:
    """`dest` relative to the work folder; refused outside it (`..` is never followed)."""
    if ".." in dest.parts or (dest != root and root not in dest.parents):
        raise Refused(f"{where}: {dest} is outside the work folder {root}")
    return dest.relative_to(root)
