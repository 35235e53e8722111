"""The order of a bench's task runs: contestants interleaved task by task.

Attempt by attempt, task by task, every contestant runs the task before the next task starts, in
an order that rotates from one task to the next (A, B then B, A; with three: A, B, C then B, C, A
then C, A, B), so no contestant is always first to meet a provider's slow minute or a warm cache.
Attempts are the outer loop: a bench stopped by its budget has a whole first pass more often.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class RunKey:
    """One task run of a bench: which task, by whom, which attempt (0-based)."""

    task: str  # suite/id
    contestant: str
    attempt: int

    def folder(self) -> str:
        """Where its record lives under the bench folder (posix, relative)."""
        return f"tasks/{self.task}/{self.contestant}/{self.attempt}"

    def run_id(self, bench_id: str) -> str:
        suite, _, task = self.task.partition("/")
        return f"{bench_id}.{suite}.{task}.{self.contestant}.{self.attempt}"

    def as_dict(self) -> dict[str, str | int]:
        return {"task": self.task, "contestant": self.contestant, "attempt": self.attempt}


def rotated(names: Sequence[str], by: int) -> list[str]:
    if not names:
        return []
    shift = by % len(names)
    return [*names[shift:], *names[:shift]]


def plan_runs(tasks: Sequence[str], contestants: Sequence[str], runs_per_task: int) -> list[RunKey]:
    """Every task run, in the order they start."""
    order: list[RunKey] = []
    slot = 0
    for attempt in range(runs_per_task):
        for task in tasks:
            order += [RunKey(task, name, attempt) for name in rotated(contestants, slot)]
            slot += 1
    return order
