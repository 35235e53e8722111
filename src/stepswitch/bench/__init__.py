"""Task suites, their validation, the interleaved runner, grading and the summary statistics.

A task is a folder (see `task.py`); `validate_task` proves its hidden tests tell the untouched
start from the reference; `grading_folder.grade` gives a run's verdict from the test runner;
`runner.run_bench` runs contestants on tasks (`taskrun.run_one` per task run, through any
`concurrent.futures.Executor`) into a bench folder that the same call resumes; `summary` and
`stats` make summary.json. docs/decisions/0015-grading.md says why it works this way.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepswitch.bench.grading_folder import grade
    from stepswitch.bench.grading_layout import lay_out
    from stepswitch.bench.task import Task, TaskSpec, load_suite, load_task
    from stepswitch.bench.validate import validate_task, validate_tasks
    from stepswitch.bench.validation_result import TaskValidation
    from stepswitch.bench.verdict import TestVerdict

# Each name's module, imported on first use: a command that reads one bench file (the replay
# page `ssw run` writes at its end reads the bench's file models) imports neither grading nor
# validation (ADR 0075).
_WHERE = {
    "Task": "stepswitch.bench.task",
    "TaskSpec": "stepswitch.bench.task",
    "TaskValidation": "stepswitch.bench.validation_result",
    "TestVerdict": "stepswitch.bench.verdict",
    "grade": "stepswitch.bench.grading_folder",
    "lay_out": "stepswitch.bench.grading_layout",
    "load_suite": "stepswitch.bench.task",
    "load_task": "stepswitch.bench.task",
    "validate_task": "stepswitch.bench.validate",
    "validate_tasks": "stepswitch.bench.validate",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "Task",
    "TaskSpec",
    "TaskValidation",
    "TestVerdict",
    "grade",
    "lay_out",
    "load_suite",
    "load_task",
    "validate_task",
    "validate_tasks",
]
