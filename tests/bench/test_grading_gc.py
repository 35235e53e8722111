"""A graded run collects the garbage its tests make as a fresh pytest does, with what existed
when pytest loaded ssw's grading plugin (pytest, its plugins, the standard library) frozen out
of the collector's sight (ADR 0019 addendum): the collections of a run then walk only what the
task's code and tests make."""

from __future__ import annotations

import shutil
from pathlib import Path

from stepswitch.bench.grading_folder import grade
from stepswitch.bench.task import load_task
from tests.gc_check import GC_TEST

from . import FIXED, write_task

# The hidden tests: the task's own, and the collector's.
HIDDEN = (
    """
from calc import add


def test_add():
    assert add(2, 3) == 5
"""
    + GC_TEST
)


def test_a_graded_run_collects_its_tests_garbage_with_pytests_objects_frozen(
    tmp_path: Path,
) -> None:
    task = load_task(write_task(tmp_path / "tasks", files={"tests/test_hidden.py": HIDDEN}))
    tree = tmp_path / "tree"
    shutil.copytree(task.repo, tree)
    (tree / "calc.py").write_text(FIXED)
    (tmp_path / "scratch").mkdir()

    verdict = grade(task, tree, tmp_path / "scratch")

    assert verdict.passed and verdict.summary() == "2 passed", verdict.output
