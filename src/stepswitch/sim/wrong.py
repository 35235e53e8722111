"""The plausible wrong changes a simulated edit makes when it misses: the reference with one
small slip in a line it changes, only part of a reference that spans files, or an `edit` whose
old text is stale (the file does not hold it, so the tool refuses it and nothing changes)."""

from __future__ import annotations

import random
import re
from typing import Any

from stepswitch.sim.reference import TaskReference

ToolCall = tuple[str, dict[str, Any]]

# One slip each: an operator, a comparison, a boolean or a number turned into its neighbour.
_SLIPS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"<="), "<"),
    (re.compile(r">="), ">"),
    (re.compile(r"(?<![<>=!])<(?![<=])"), "<="),
    (re.compile(r"(?<![<>=!-])>(?![>=])"), ">="),
    (re.compile(r"=="), "!="),
    (re.compile(r"!="), "=="),
    (re.compile(r"\bTrue\b"), "False"),
    (re.compile(r"\bFalse\b"), "True"),
    (re.compile(r"\band\b"), "or"),
    (re.compile(r"\bor\b"), "and"),
    (re.compile(r"\bnot "), ""),
    (re.compile(r"\b(\d+)\b"), "NUMBER"),
)


def _slip(line: str, rng: random.Random) -> str | None:
    """`line` with one slip, or None when none fits it."""
    fitting = [(p, r) for p, r in _SLIPS if p.search(line)]
    if not fitting:
        return None
    pattern, replacement = rng.choice(fitting)
    if replacement == "NUMBER":
        return pattern.sub(lambda m: str(int(m.group(1)) + 1), line, count=1)
    return pattern.sub(replacement, line, count=1)


def mutated_reference(ref: TaskReference, rng: random.Random) -> list[ToolCall] | None:
    """Every reference file written whole, one line it adds carrying a slip; None: no line the
    reference adds has a slip that fits."""
    candidates = []
    for path in ref.paths:
        old_lines = set((ref.before.get(path) or "").splitlines())
        lines = ref.after[path].splitlines(keepends=True)
        for index, line in enumerate(lines):
            if line.strip() and line.rstrip("\n") not in old_lines and not _comment(line):
                candidates.append((path, index))
    rng.shuffle(candidates)
    for path, index in candidates:
        lines = ref.after[path].splitlines(keepends=True)
        slipped = _slip(lines[index], rng)
        if slipped is not None and slipped != lines[index]:
            lines[index] = slipped
            writes = {p: ref.after[p] for p in ref.paths}
            writes[path] = "".join(lines)
            return [("write_file", {"path": p, "content": c}) for p, c in writes.items()]
    return None


def _comment(line: str) -> bool:
    return line.lstrip().startswith(("#", '"""', "'''"))


def partial_reference(ref: TaskReference, rng: random.Random) -> list[ToolCall] | None:
    """Some of a multi-file reference's files, not all; None: it changes one file."""
    if len(ref.paths) < 2:
        return None
    kept = rng.sample(ref.paths, rng.randint(1, len(ref.paths) - 1))
    return [("write_file", {"path": p, "content": ref.after[p]}) for p in sorted(kept)]


def stale_edit(ref: TaskReference, rng: random.Random) -> list[ToolCall]:
    """An `edit` of a reference file whose old text the file does not hold: refused, no change."""
    path = rng.choice(ref.paths)
    old = "# (a line the model remembered, which this file does not have)\n"
    return [("edit", {"path": path, "old": old, "new": "# fixed\n"})]


def wrong_change(ref: TaskReference, rng: random.Random) -> tuple[str, list[ToolCall]]:
    """One wrong change, its kind drawn from those that fit the task: (kind, its tool calls)."""
    kinds = ["mutation", "partial", "stale"]
    rng.shuffle(kinds)
    for kind in kinds:
        calls = (
            mutated_reference(ref, rng)
            if kind == "mutation"
            else partial_reference(ref, rng)
            if kind == "partial"
            else stale_edit(ref, rng)
        )
        if calls is not None:
            return kind, calls
    raise AssertionError("stale_edit always fits")  # pragma: no cover
