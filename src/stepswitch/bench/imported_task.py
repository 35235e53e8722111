"""What an importer (humaneval.py, exercism.py, pairs.py) writes for a task: its task.toml, the
start's pyproject.toml, and the task folder's files."""

from __future__ import annotations

from pathlib import Path

from stepswitch.bench.grading_timeout import backstop_s

PER_TEST_TIMEOUT_S = 10  # CPU seconds per hidden test, as task.toml says
MIN_WHOLE_RUN_S = 120


def whole_run_timeout_s(tests: int) -> int:
    """The hidden tests' whole-run limit for `tests` tests: each at its wall-clock backstop, and
    never below MIN_WHOLE_RUN_S (a handful of tests still pays pytest's start)."""
    return max(MIN_WHOLE_RUN_S, int(backstop_s(tests, PER_TEST_TIMEOUT_S)))


def imported_task_toml(
    comment: str, task_id: str, kind: str, *, timeout_s: int, task_timeout_s: int
) -> str:
    """task.toml as the importers write it: a line saying where the task came from, the hidden
    tests in .ssw_hidden with a 10 s per-test limit, and the given limits."""
    return (
        f'# {comment}\nid = "{task_id}"\nkind = "{kind}"\n\n[tests]\n'
        'command = "python -m pytest -q -p no:cacheprovider .ssw_hidden"\n'
        f"per_test_timeout_s = {PER_TEST_TIMEOUT_S}\ntimeout_s = {timeout_s}\n\n"
        f"[limits]\ntask_timeout_s = {task_timeout_s}\n"
    )


def imported_pyproject(name: str) -> str:
    """An imported start's pyproject.toml: a name, and pytest collecting from the top."""
    return (
        f'[project]\nname = "{name}"\nversion = "0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["."]\n'
    )


def imported_task_head(
    comment: str,
    task_id: str,
    kind: str,
    instruction: str,
    project: str,
    *,
    timeout_s: int,
    task_timeout_s: int,
) -> dict[str, str]:
    """The files every importer's task starts with: task.toml (imported_task_toml), the
    instruction, and the start's pyproject.toml naming `project`."""
    return {
        "task.toml": imported_task_toml(
            comment, task_id, kind, timeout_s=timeout_s, task_timeout_s=task_timeout_s
        ),
        "instruction.md": instruction,
        "repo/pyproject.toml": imported_pyproject(project),
    }


def write_task_folder(dest: Path, files: dict[str, str]) -> None:
    """An importer's task folder: each file (path relative to `dest` -> text) written."""
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
