"""Task suites, their validation, the interleaved runner, grading and the summary statistics.

A task is a folder (see `task.py`); `validate_task` proves its hidden tests tell the untouched
start from the reference; `grading_folder.grade` gives a run's verdict from the test runner;
`runner.run_bench` runs contestants on tasks (`taskrun.run_one` per task run, through any
`concurrent.futures.Executor`) into a bench folder that the same call resumes; `summary` and
`stats` make summary.json. docs/decisions/0015-grading.md says why it works this way.
"""

from stepswitch.bench.grading_folder import grade
from stepswitch.bench.grading_layout import lay_out
from stepswitch.bench.task import Task, TaskSpec, load_suite, load_task
from stepswitch.bench.validate import validate_task, validate_tasks
from stepswitch.bench.validation_result import TaskValidation
from stepswitch.bench.verdict import TestVerdict

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
