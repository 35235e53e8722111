"""The call map: which tests ran which lines of the project's code on the base commit, recorded
by the `ssw_select` plugin during one traced run of the full suite (`GateSuite.record_call_map`),
and the tests it points to for a change.

A change is read as the base commit's side of `git diff -U0`: the lines it replaced or removed,
and for a pure insertion the lines on either side of it. The tests that ran one of those lines
on the base commit are the likeliest to fail, so the tests gate runs them first, as a stage of
their own (`tests:covered`). The map is only an order: the full suite still decides, so a map
that is wrong (a test that reaches the change through data, a subprocess or a thread) costs
time, never a verdict. A change the map cannot place (a test module, a new file, a line that
runs at import: module-level statements, class bodies, decorators, default values; see
`gates.import_time` and ADR 0076) is "not fully covered", and the import graph's stages run too.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from stepswitch.errors import UsageError
from stepswitch.gates.import_time import Spans, import_time_spans, in_spans
from stepswitch.util.git_tree import TreeGit

CALL_MAP_FILE = "call-map.json"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


@dataclass(frozen=True)
class CallMap:
    """One traced run of the full suite at `commit` in the tree at `root`: test ids (as pytest
    names them from its `rootdir`) with their seconds, and for each project file the tests that
    ran each line and called each function (first line, last line), and the lines that run at
    import (`at_import`), which no trace places."""

    commit: str
    root: str
    rootdir: str
    tests: tuple[tuple[str, float], ...]
    groups: tuple[tuple[int, ...], ...]  # lists of test indexes, shared by lines and functions
    lines: Mapping[str, Mapping[int, int]]  # file: line: group
    functions: Mapping[str, tuple[tuple[int, int, int], ...]]  # file: (first, last, group)
    at_import: Mapping[str, Spans]  # file: the spans of its lines that run at import

    @classmethod
    def parse(cls, commit: str, root: str, data: Any) -> CallMap:
        """From what the plugin wrote with `at_import` added (`import_time_of`), or what
        `to_json` saved. Raises ValueError (or KeyError, TypeError) when it is not that: a map
        saved before `at_import` was recorded is no map (traced again)."""
        # Lists of test indexes are most of the map (dateutil: 1,250 lists over 5,322 tests):
        # converted and bounds-checked in C, not one number at a time.
        groups = tuple(tuple(g) for g in data["groups"])
        tests = tuple((str(t), float(s)) for t, s in data["tests"])
        lines = {
            str(rel): {int(line): int(g) for line, g in found.items()}
            for rel, found in data["lines"].items()
        }
        functions = {
            str(rel): tuple((int(a), int(b), int(g)) for a, b, g in spans)
            for rel, spans in data["functions"].items()
        }
        at_import = {
            str(rel): tuple((int(a), int(b)) for a, b in spans)
            for rel, spans in data["at_import"].items()
        }
        used = [g for g in groups if g]
        if used and (min(map(min, used)) < 0 or max(map(max, used)) >= len(tests)):
            raise ValueError("a test index is out of range")
        every = [*(g for f in lines.values() for g in f.values())]
        every += [s[2] for spans in functions.values() for s in spans]
        if every and (min(every) < 0 or max(every) >= len(groups)):
            raise ValueError("a group index is out of range")
        rootdir = str(data["rootdir"])
        return cls(commit, root, rootdir, tests, groups, lines, functions, at_import)

    def to_json(self) -> str:
        return json.dumps(
            {
                "commit": self.commit,
                "root": self.root,
                "rootdir": self.rootdir,
                "tests": self.tests,
                "groups": self.groups,
                "lines": {r: {str(k): v for k, v in f.items()} for r, f in self.lines.items()},
                "functions": self.functions,
                "at_import": self.at_import,
            },
            separators=(",", ":"),
        )

    @classmethod
    def read(cls, path: Path, commit: str) -> CallMap | None:
        """The map saved at `path` when it was recorded at `commit`; None otherwise (missing,
        unreadable, another commit)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("commit") != commit:
                return None
            return cls.parse(commit, str(data["root"]), data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def covering(self, changed: Mapping[str, list[int]]) -> tuple[list[str], bool]:
        """The tests that ran a changed line (or, for a line no test ran as a line of its own,
        such as a comment, called the function around it), shortest first; and whether every
        changed file and line was placed in the map (False: the import graph must look too).
        A line that runs at import is never placed: whichever test imported the module first
        ran it, or none did (collection imports before any test), and every importer sees it.
        The tests that ran it still come first."""
        found: set[int] = set()
        complete = True
        for rel, lines in changed.items():
            ran = self.lines.get(rel)
            if ran is None or not lines:
                complete = False
                continue
            at_import = self.at_import.get(rel)  # None: its source was not read
            for line in lines:
                if at_import is None or in_spans(at_import, line):
                    complete = False
                group = ran.get(line)
                if group is None:
                    group = self._called_around(rel, line)
                if group is None:
                    complete = False
                else:
                    found.update(self.groups[group])
        ordered = sorted(found, key=lambda i: (self.tests[i][1], i))
        return [self.tests[i][0] for i in ordered], complete

    def _called_around(self, rel: str, line: int) -> int | None:
        """The tests (group) that called the innermost recorded function spanning `line`."""
        spans = [s for s in self.functions.get(rel, ()) if s[0] <= line <= s[1]]
        if not spans:
            return None
        return min(spans, key=lambda s: s[1] - s[0])[2]

    def usable_at(self, root: Path) -> bool:
        """Whether its test ids name files in the tree at `root` (see `test_file`)."""
        recorded = Path(self.root)
        return recorded == root or Path(self.rootdir).is_relative_to(recorded)

    def test_file(self, test_id: str, root: Path) -> Path | None:
        """Where the test's file is in the tree at `root` (a map recorded in another worktree
        of the same commit applies when pytest's rootdir was inside it); None when the map's
        test ids cannot be placed there."""
        recorded, rootdir = Path(self.root), Path(self.rootdir)
        name = test_id.split("::", 1)[0]
        if rootdir.is_relative_to(recorded):
            return root / rootdir.relative_to(recorded) / name
        return rootdir / name if recorded == root else None


def import_time_of(root: Path, data: Any) -> dict[str, Spans]:
    """For each project file the plugin's `data` names, the spans of its lines that run at
    import, read from the traced tree at `root` (a file gone or unreadable is left out, and none
    of its lines is placed)."""
    files = {*data.get("lines", {}), *data.get("functions", {})}
    out: dict[str, Spans] = {}
    for rel in sorted(files):
        try:
            out[rel] = import_time_spans((root / rel).read_bytes())
        except OSError:
            continue
    return out


def changed_lines(tree: TreeGit | None, commit: str) -> dict[str, list[int]] | None:
    """For each file that differs from `commit` (its name at `commit`), the base commit's lines
    the change replaced or removed; a pure insertion gives no line but keeps the file in the
    result with what surrounds it, so it is never "fully covered". None when git cannot say."""
    if tree is None:
        return None
    try:
        text = tree.diff("-U0", "--src-prefix=a/", "--dst-prefix=b/", "-M", base=commit)
    except UsageError:
        return None
    return parse_unified_zero(text)


INSERTED = -1  # stands in a file's list for "lines were inserted here": never in a map


def parse_unified_zero(text: str) -> dict[str, list[int]]:
    """Old-side line numbers per old path from `git diff -U0` output. A pure insertion after
    line n adds n and n + 1 (the code on either side) and INSERTED."""
    out: dict[str, list[int]] = {}
    current: list[int] | None = None
    for line in text.splitlines():
        if line.startswith("--- "):
            name = line[4:]
            if name == "/dev/null" or not name.startswith("a/"):
                current = None  # a new file, or a quoted name: nothing to look up
            else:
                current = out.setdefault(PurePosixPath(name[2:]).as_posix(), [])
            continue
        match = _HUNK.match(line)
        if match is None or current is None:
            continue
        start, count = int(match.group(1)), int(match.group(2) or "1")
        if count == 0:
            current += [start, start + 1, INSERTED]
        else:
            current += range(start, start + count)
    return out


class BackgroundTrace:
    """A call map traced on a thread of its own (`GateSuite.record_call_map(background=True)`)
    in `copy`, a copy of the base commit's files that is removed when it ends; `stop` kills the
    traced suite and waits for the thread."""

    def __init__(self, trace: Callable[[threading.Event], str], copy: Path) -> None:
        self.copy = copy
        self.line: str | None = None  # how it went, once it has
        self._told = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(trace,), daemon=True)
        self._thread.start()

    def _run(self, trace: Callable[[threading.Event], str]) -> None:
        try:
            self.line = trace(self._stop)
        except Exception as exc:  # a bug of ours: no map, said so, the run goes on
            self.line = f"gates: no call map: tracing failed ({type(exc).__name__}: {exc})"
        finally:
            shutil.rmtree(self.copy, ignore_errors=True)
        if self._stop.is_set():
            self.line = "gates: no call map: the task ended before the trace did"

    def news(self) -> str | None:
        """How it went, the first time this is asked once it has ended; else None."""
        if self.line is None or self._told:
            return None
        self._told = True
        return self.line

    def wait(self, timeout_s: float) -> bool:
        """Wait for the trace to end, at most `timeout_s`; whether it has."""
        self._thread.join(timeout=timeout_s)
        return not self._thread.is_alive()

    def stop(self, wait_s: float = 60.0) -> None:
        self._stop.set()
        self._thread.join(timeout=wait_s)
