"""A check that already fails before any edit, judged by what the change adds: the findings in
its output (a linter's `path:line:col: code message`, a type checker's `path:line: error: ...`,
tsc's `path(line,col): error TS...`, `Would reformat: path`) are counted without their line
numbers, which move with any edit above them, and the gate fails only on findings the untouched
start did not have.

Without this, a repository whose lint or types already fail could never end a run `done`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from stepswitch.gates.runner import GateResult

# path:line[:col][:] rest — the shape ruff (concise), flake8, pylint (parseable), mypy use.
_LOCATED = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+)(?::\d+)?:?\s+(?P<rest>\S.*)$")
# path(line,col): rest — tsc's shape.
_PARENS = re.compile(r"^(?P<path>[^\s(][^(]*)\(\d+,\d+\):\s+(?P<rest>\S.*)$")
_REFORMAT = re.compile(r"^(?:Would reformat|would reformat):?\s+(?P<path>\S.*)$")


def findings(output: str) -> Counter[str]:
    """The findings an output names, each as `path: what` (no line or column numbers)."""
    found: Counter[str] = Counter()
    for raw in output.splitlines():
        line = raw.strip()
        if (located := _LOCATED.match(line) or _PARENS.match(line)) is not None:
            found[f"{located['path']}: {located['rest']}"] += 1
        elif (reformat := _REFORMAT.match(line)) is not None:
            found[f"{reformat['path']}: would be reformatted"] += 1
    return found


@dataclass(frozen=True)
class KnownFindings:
    """What a gate reported before any edit."""

    gate: str
    start: Counter[str]

    def judge(self, output: str) -> tuple[bool, list[str]]:
        """Whether `output` (the gate failing again) adds nothing to the start's findings, and
        the findings it adds. An output with no finding it can read is never a pass: the gate
        failed for a reason this cannot see."""
        now = findings(output)
        if not now:
            return False, []
        added = now - self.start
        return not added, sorted(added.elements())


def judged(result: GateResult, known: KnownFindings) -> GateResult:
    """`result` (the gate failing again) as the change's verdict: a pass when it adds no finding
    to the start's, else a failure that names only what it adds."""
    clean, added = known.judge(result.log)
    start = sum(known.start.values())
    if clean:
        report = (
            f"{known.gate}: passed: the {start} finding(s) it reports were there before any "
            "edit; the change adds none"
        )
        return replace(result, passed=True, report=report)
    if not added:
        return result
    shown = "\n".join(added[:20]) + (f"\n[{len(added) - 20} more]" if len(added) > 20 else "")
    report = (
        f"{known.gate}: failed: the change adds {len(added)} finding(s) the untouched start did "
        f"not have ({start} were there before and are not counted):\n{shown}"
    )
    return replace(result, report=report)
