"""A bench task's reference change as the simulated population knows it (stepswitch.sim)."""

from __future__ import annotations

from pathlib import Path

from stepswitch.bench.oracle import reference_change
from stepswitch.bench.task import Task
from stepswitch.sim.reference import TaskReference


def task_reference(task: Task, checkout: Path, scratch: Path) -> TaskReference:
    """The reference change in `checkout` (the task's start), as the oracle computes it."""
    change = reference_change(task, checkout, scratch)
    before = {}
    for rel in change.writes:
        path = checkout / rel
        before[rel] = path.read_text(encoding="utf-8") if path.is_file() else None
    return TaskReference(task.name, dict(change.writes), before)
