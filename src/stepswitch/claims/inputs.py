"""What a claim's metrics read, and nothing else: every file goes through `Inputs`, which keeps its
sha256 for the evidence, and the dates of the measurements and runs in it for pre-registration."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from stepswitch.claims.scope import EvidenceKind
from stepswitch.errors import UsageError
from stepswitch.util.hashing import read_tree, sha256_bytes, tree_hash


class EvidenceError(UsageError):
    """An evidence file cannot be read as its metric reads it (exit 2): names the file and why."""


class Unprovable(Exception):
    """The evidence cannot prove the claim: it disagrees with itself (a summary that is not what
    its raw rows give) or leaves a figure unknown (a cell with no known cost)."""


# An absolute path in an evidence file names one machine (its home, a scratch folder, a checkout,
# an interpreter), so the file cannot be re-checked as it stands anywhere else (ADR 0026). Found:
# a path under a root that holds one machine's own files, and any absolute path to an interpreter,
# a venv or site-packages. Not found: system paths every machine has (/dev/null, /proc, /usr/bin,
# /etc), URLs and API routes (`https://host/v1/...`, `/v1/messages`), relative paths (`a/b`,
# `.venv/bin/python`), placeholders (`<worktree>/src`) and ratios (`1/3`, `ms/step`). A path
# starts at the beginning of a line, after a space, a quote, `=`, `(` or a JSON escape (`\\n`).
MACHINE_ROOTS = (
    "root",
    "home",
    "Users",
    "tmp",
    "var/tmp",
    "var/folders",
    "private",
    "work",
    "workspace",
    "workspaces",
    "mnt",
    "srv",
    "opt",
    "media",
    "builds",
    "runner",
    "scratch",
    "data",
    "usr/local",
    "nix/store",
)
# A path starts at a "/" that follows no word, dot, tilde, colon, slash, backslash, ">" or "-"
# (a URL, a relative path, an option), unless an escape (\n, \t, a quote) comes just before. The
# condition looks back from after the "/", so every pattern starts with that literal and the
# regex engine skips to each "/" at once (a look-behind first made it try every position: most
# of `ssw prove`'s time, over the megabytes of bench records).
_AFTER_START = r"(?:(?<![\w.~:/\\>-]/)|(?<=\\[nrt\"']/))"
_CHARS = r"[^\s\"'`<>|;,()\[\]{}\\]"
_ROOTS = "|".join(re.escape(r) for r in MACHINE_ROOTS)
_TOOLCHAIN = r"(?:/bin/python[\d.]*(?![\w.-])|/\.?venv[\w.-]*/|/site-packages/)"
MACHINE_PATH = re.compile(
    rf"/{_AFTER_START}(?:(?:{_ROOTS})(?![\w.-])(?:/{_CHARS}*)?"
    # an interpreter, a venv or site-packages anywhere but the system's own /bin and /usr/bin
    rf"|(?!(?:usr/)?bin/){_CHARS}*?{_TOOLCHAIN}{_CHARS}*)"
)


def machine_paths(text: str, root: Path | None = None) -> list[tuple[int, str]]:
    """(line, path) of every absolute machine path in `text` (rule above); with `root`, also the
    repository's own absolute location wherever it is."""
    found = [(m.start(), m.group(0)) for m in MACHINE_PATH.finditer(text)]
    if root is not None:
        here = re.escape(root.resolve().as_posix().removeprefix("/"))
        found += [
            (m.start(), m.group(0))
            for m in re.finditer(rf"/{_AFTER_START}{here}(?![\w.-]){_CHARS}*", text)
        ]
    lines: dict[int, str] = {}
    for at, path in sorted(found):
        lines.setdefault(text.count("\n", 0, at) + 1, path)
    return sorted(lines.items())


def refuse_machine_paths(rel: str, text: str, root: Path | None = None) -> None:
    """Unprovable when `rel` holds an absolute machine path: the first, by line, and how many
    more lines do."""
    found = machine_paths(text, root)
    if not found:
        return
    line, path = found[0]
    others = len(found) - 1
    more = f" (and {others} more line{'s' if others > 1 else ''})" if others else ""
    raise Unprovable(
        f"{rel}:{line}: holds an absolute machine path {path!r}{more}; evidence names paths "
        "relative to the repository (or a placeholder like <worktree>): re-measure with a "
        "producer that writes them so"
    )


def checked_path(text: str) -> str:
    """A path as claims write them: relative, POSIX, inside the repository."""
    path = PurePosixPath(text)
    if not text or path.is_absolute() or ".." in path.parts or "\\" in text:
        raise ValueError(f"{text!r} is not a relative path inside the repository")
    return path.as_posix()


def line_holding(text: str, needle: str) -> int | None:
    """The number of the first line of `text` that holds `needle`; None when none does."""
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return None


@dataclass(frozen=True)
class RunSeen:
    """A run whose records a metric read: when it started, on which commit, for which claims."""

    folder: str
    started_at: str
    base_commit: str
    claims: tuple[str, ...]


@dataclass(frozen=True)
class MadeAt:
    """What a producer's record says of its making: ssw's own commit it ran (never a task's
    scratch repository's) and when."""

    commit: str
    when: str


@dataclass
class Inputs:
    root: Path
    evidence: dict[str, list[str]]  # role -> paths, as the claim names them
    params: dict[str, str] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)  # path -> sha256 (folders end with /)
    measured: dict[str, str] = field(default_factory=dict)  # path -> when it was measured
    runs: list[RunSeen] = field(default_factory=list)
    undated: dict[str, str] = field(default_factory=dict)  # path -> why it shows no date
    made: dict[str, MadeAt] = field(default_factory=dict)  # path -> ssw's commit and its date
    # Whose runs the evidence holds ("contestant big", "run bench/runs/x/...") -> what they are
    # evidence of: what a claim on them may say (claims/scope.py).
    contestants: dict[str, EvidenceKind] = field(default_factory=dict)

    def paths(self, role: str) -> list[str]:
        return self.evidence[role]

    def one(self, role: str) -> str:
        paths = self.evidence[role]
        if len(paths) != 1:
            raise EvidenceError(f"evidence.{role} must name one file, not {len(paths)}")
        return paths[0]

    def _path(self, rel: str) -> Path:
        path = self.root / checked_path(rel)
        if not path.exists():
            raise EvidenceError(f"{rel} does not exist")
        return path

    def read_bytes(self, rel: str) -> bytes:
        path = self._path(rel)
        if not path.is_file():
            raise EvidenceError(f"{rel} is not a file")
        data = path.read_bytes()
        self.hashes[rel] = sha256_bytes(data)
        refuse_machine_paths(rel, data.decode("utf-8", errors="replace"), self.root)
        return data

    def text(self, rel: str) -> str:
        try:
            return self.read_bytes(rel).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EvidenceError(f"{rel} is not UTF-8 text ({exc.reason})") from exc

    def json(self, rel: str) -> Any:
        try:
            return json.loads(self.text(rel))
        except json.JSONDecodeError as exc:
            raise EvidenceError(f"{rel} is not JSON: line {exc.lineno}: {exc.msg}") from exc

    def yaml(self, rel: str) -> Any:
        from stepswitch.claims.yamlio import parse_yaml

        return parse_yaml(self.text(rel), rel)

    def csv_rows(self, rel: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(self.text(rel), newline="")))

    def folder(self, rel: str) -> Path:
        """A folder read whole (a suite, a bench run): hashed as one input."""
        path = self._path(rel)
        if not path.is_dir():
            raise EvidenceError(f"{rel} is not a folder")
        files = read_tree(path)
        self.hashes[rel.rstrip("/") + "/"] = tree_hash(path, files)
        for file, data in files:
            text = data.decode("utf-8", errors="replace")
            refuse_machine_paths(file.relative_to(self.root).as_posix(), text, self.root)
        return path

    def where(self, rel: str, needle: str) -> str:
        """`rel` and the number of its first line holding `needle` (a value a problem names), as
        problems name a place: `path line N`; the path alone when no line holds it."""
        try:
            text = (self.root / checked_path(rel)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return rel
        number = line_holding(text, needle)
        return rel if number is None else f"{rel} line {number}"

    def measured_at(self, rel: str, when: str) -> None:
        """The measurement in `rel` was made at `when` (ISO date or date-time)."""
        self.measured[rel] = when

    def made_at(self, rel: str, commit: str, when: str) -> None:
        """The record `rel` was made by ssw at `commit` (its own, full or abbreviated) at
        `when`: the commit must be in this history and no younger than the record."""
        self.made[rel] = MadeAt(commit, when)

    def run(self, seen: RunSeen) -> None:
        self.runs.append(seen)

    def undated_input(self, rel: str, why: str) -> None:
        """`rel` cannot show when it was made: registration refuses it for any claim."""
        self.undated[rel] = why

    def contestant(self, who: str, kind: EvidenceKind) -> None:
        """The evidence holds `who`'s runs, of `kind`; one name is one kind in every input."""
        seen = self.contestants.setdefault(who, kind)
        if seen != kind:
            raise Unprovable(f"{who} is {seen} in one input and {kind} in another")


def field_of(data: Any, rel: str, *keys: str) -> Any:
    """data[k1][k2]...; a missing key is an EvidenceError naming the file and the key path."""
    here = data
    for depth, key in enumerate(keys):
        if not isinstance(here, dict) or key not in here:
            raise EvidenceError(f"{rel} has no {'.'.join(keys[: depth + 1])}")
        here = here[key]
    return here


def number_of(data: Any, rel: str, *keys: str) -> float:
    value = field_of(data, rel, *keys)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EvidenceError(f"{rel}: {'.'.join(keys)} is not a number: {value!r}")
    return float(value)


def agree(
    rel: str,
    what: str,
    recomputed: float,
    stored: float,
    tolerance: float,
    source: str = "the raw rows",
) -> None:
    """A stored summary figure must be what the raw rows give, within its stated rounding."""
    if abs(recomputed - stored) > tolerance + 1e-12 * max(1.0, abs(stored)):
        raise Unprovable(f"{rel}: {what} is {stored:g}, but {source} give {recomputed:g}")
