"""What the simulated population knows of a task: its reference change (the files under the
task's solution/ applied to its start; bench/sim_reference.py computes it), each file's text
before and after, and the change's net lines, against which a review's diff is judged."""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TaskReference:
    task: str  # suite/id: part of every call's seed
    after: dict[str, str]  # path -> its whole content once the reference is applied
    before: dict[str, str | None] = field(default_factory=dict)  # None: the reference adds it

    @property
    def paths(self) -> list[str]:
        return sorted(self.after)

    def net_lines(self) -> Counter[str]:
        """Lines the reference adds minus those it removes (see `net_lines_of_diff`)."""
        net: Counter[str] = Counter()
        for path, new in self.after.items():
            old = self.before.get(path) or ""
            for line in difflib.unified_diff(old.splitlines(), new.splitlines(), n=0, lineterm=""):
                _count(net, line)
        return _nonzero(net)


def _count(net: Counter[str], line: str) -> None:
    if line.startswith(("+++", "---")):
        return
    if line.startswith("+"):
        net[line[1:].rstrip()] += 1
    elif line.startswith("-"):
        net[line[1:].rstrip()] -= 1


def _nonzero(net: Counter[str]) -> Counter[str]:
    return Counter({line: n for line, n in net.items() if n})


def net_lines_of_diff(diff: str) -> Counter[str]:
    """A unified diff's added lines minus its removed ones: the same for two diffs of one change
    however each paired its lines (git and difflib may choose differently)."""
    net: Counter[str] = Counter()
    for line in diff.splitlines():
        _count(net, line)
    return _nonzero(net)
