"""Issue 21, through the real `ssw bench run` (a process, a policy on the scripted provider per
contestant, the sandbox, grading): each hostile contestant leaves the task's bug in calc.py and
commits what would rig plain pytest, and grading must fail the task run, naming the cause, never
as a harness error. The control for each: the committed change applied to the task's start, with
the hidden tests beside it, passes under the task's own command run as plain pytest. A
contestant with the right code and a harmless root module still passes.

The other grading routes of the issue already run through the bench (run_bench, the real task
run and grading, with in-process contestants): graded code rewriting a hidden test at import,
code that never finishes or ends pytest at import and committed links out of the tree in
test_grading_faults.py; declared test data rewritten in test_task_data.py.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w
import yaml

from stepswitch.bench.task import HIDDEN_FOLDER
from tests.gates.test_hostile_run import calls
from tests.harness.task import approve_and_summarize, done, explore, make_policy

from . import FIXED, write_task
from .test_cli_bench import ssw
from .test_grading_config import NO_PYTEST_TABLE, PASS_ALL, SHIM

pytestmark = pytest.mark.slow  # one bench of four task runs, shared by the module

# One rung: a failing gate run ends the task run, with nothing to escalate to.
POLICY = make_policy(escalation={"after_gate_failures": 1, "ladder": ["mid"]})
HIDDEN_ID = f"{HIDDEN_FOLDER}.test_hidden::test_add"

# contestant: the files it writes, calc.py left buggy unless it writes it.
CONTESTANTS: dict[str, dict[str, str]] = {
    # 10: imported by pytest itself at start-up, before any test: PYTEST_ADDOPTS=-p rig (an
    # argparse.py takes the same check: test_grading_config.py).
    "iniconfig": {"iniconfig.py": SHIM, "rig.py": PASS_ALL},
    # 11: pytest configuration the task's start does not have.
    "toxini": {"tox.ini": "[pytest]\naddopts = -p rig\n", "rig.py": PASS_ALL},
    "setupcfg": {"setup.cfg": "[tool:pytest]\naddopts = -p rig\n", "rig.py": PASS_ALL},
    # The right code, and a root module that shadows nothing.
    "right": {"calc.py": FIXED.lstrip("\n"), "notes.py": "NOTE = 'a root module'\n"},
}
HOSTILE = sorted(set(CONTESTANTS) - {"right"})


def script(files: dict[str, str]) -> list[dict[str, object]]:
    """plan, navigate, read and run; one EDIT writing `files`; should the agent's own gates
    pass, the review approves and the summary commits."""
    writes = [("write_file", {"path": p, "content": c}) for p, c in files.items()]
    return [*explore(), calls(*writes), done("wrote the files"), *approve_and_summarize()]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, str]]]:
    """One `ssw bench run` of every contestant on one task whose start configures no pytest:
    the bench folder and results.csv's rows by contestant."""
    root = tmp_path_factory.mktemp("hostile-bench")
    write_task(root, "t1", {"repo/pyproject.toml": NO_PYTEST_TABLE})
    args: list[object] = ["bench", "run", "--suite", "suite", "--out", "runs/b1", "--json"]
    for name, files in CONTESTANTS.items():
        (root / f"{name}.toml").write_text(tomli_w.dumps(POLICY))
        (root / f"{name}.yaml").write_text(yaml.safe_dump({"replies": script(files)}))
        args += ["--contestant", f"{name}.toml", "--script", f"{name}={name}.yaml"]

    finished = ssw(*args, cwd=root)

    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    folder = root / "runs" / "b1"
    with (folder / "results.csv").open(newline="") as table:
        rows = {row["contestant"]: row for row in csv.DictReader(table)}
    assert sorted(rows) == sorted(CONTESTANTS)
    return folder, rows


def graded_as_plain_pytest(task: Path, patch: Path, dest: Path) -> subprocess.CompletedProcess[str]:
    """The control: the task's start with the committed change applied and the hidden tests
    beside it, under the task's own command, as pytest itself configures it."""
    shutil.copytree(task / "repo", dest)
    if patch.read_text():
        subprocess.run(["git", "apply", str(patch)], cwd=dest, check=True, capture_output=True)
    shutil.copytree(task / "tests", dest / HIDDEN_FOLDER)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", HIDDEN_FOLDER],
        cwd=dest,
        env={"PATH": os.environ["PATH"], "HOME": str(dest), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", HOSTILE)
def test_a_wrong_change_that_rigs_plain_pytest_is_graded_as_a_failed_run(
    bench: tuple[Path, dict[str, dict[str, str]]], tmp_path: Path, name: str
) -> None:
    folder, rows = bench
    row = rows[name]
    patch = folder / row["folder"] / "change.patch"
    for path in CONTESTANTS[name]:
        assert f"b/{path}" in patch.read_text()  # committed: grading saw it
    task = folder.parent.parent / "suite" / "t1"
    control = graded_as_plain_pytest(task, patch, tmp_path / "control")
    assert control.returncode == 0 and "1 passed" in control.stdout, control.stdout

    assert row["passed"] == "false", row
    assert row["outcome"] in ("done", "gates_failed"), row  # the run's own: no harness error
    if name == "iniconfig":
        assert row["reason"] == (
            "grading: iniconfig.py: added, and shadows module iniconfig of the installed iniconfig"
        ), row
    else:
        assert row["verdict"] == "1 failed", row
        grade = (folder / row["folder"] / "grade.json").read_text()
        assert HIDDEN_ID in grade


def test_the_right_code_beside_a_root_module_passes(
    bench: tuple[Path, dict[str, dict[str, str]]],
) -> None:
    _, rows = bench
    row = rows["right"]
    assert (row["passed"], row["outcome"], row["verdict"]) == ("true", "done", "1 passed"), row
