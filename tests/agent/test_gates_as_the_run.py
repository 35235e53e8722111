"""`ssw gates` gives the verdict a run gets: it prepares the repository as a run does (the run's
sandbox, the run's allow-listed environment) and then runs the gates (ADR 0056). Two
repositories, each judged by `ssw gates` and by a scripted `ssw run`: a test that fails when
MY_SETTING is set, with MY_SETTING set for both (a run's commands never get it); a gate that
reaches a loopback server (a run's sandbox has no network). Each starts with a control showing
that the probe is real: unconfined, with the user's environment, it gives the other verdict."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.util.sandbox import choose_sandbox
from tests.gates import scratch_env
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git
from tests.harness.task import approve_and_summarize, done, run_ssw, tool

ADD = "def add(a, b):\n    return a + b\n"
SWAPPED = ("    return a + b", "    return b + a")  # the run's edit: same behaviour
PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\ntestpaths = ["tests"]\n'
SETTING_TEST = """import os

from calc.ops import add


def test_add_ignores_the_users_settings():
    assert "MY_SETTING" not in os.environ, "MY_SETTING reached the tests"
    assert add(1, 2) == 3
"""
REACH = "import socket\n\nsocket.create_connection(('127.0.0.1', {port}), 5).close()\n"
REACH_GATE = '[gates.reach]\ncommand = "python3 reach.py"\n'


def _sandbox_works() -> bool:
    try:
        return choose_sandbox("auto").confines
    except UsageError:
        return False


pytestmark = pytest.mark.skipif(
    not _sandbox_works(), reason="no sandbox backend works on this machine"
)


def _repo(target: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text, encoding="utf-8")
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "the user's code")
    return target


def _script(*, passes: bool) -> list[dict[str, object]]:
    """Explore, swap the operands of `add`, then review and summarize when the gates pass."""
    explore = [done("1. Swap the operands."), done("calc/ops.py"), done("add"), done("ran")]
    edit = [tool("edit", path="calc/ops.py", old=SWAPPED[0], new=SWAPPED[1]), done("swapped")]
    return [*explore, *edit, *(approve_and_summarize() if passes else [])]


def _ssw_gates(repo: Path, **env: str) -> tuple[str, str]:
    """`ssw gates REPO` on the tree the run's gates judged (its branch, checked out): the
    verdict and what it printed."""
    shown = run_ssw_cli(["gates", repo], env={**os.environ, **env}, timeout=240)
    assert shown.returncode in (0, 1), shown.stdout + shown.stderr
    return ("passed" if shown.returncode == 0 else "failed"), shown.stdout


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    yield server
    server.close()


def test_a_variable_the_run_never_passes_on_reaches_no_gate_of_ssw_gates_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    repo = _repo(
        tmp_path / "repo",
        {
            "pyproject.toml": PYPROJECT,
            "calc/__init__.py": "",
            "calc/ops.py": ADD,
            "tests/test_ops.py": SETTING_TEST,
        },
    )
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    env = scratch_env(tmp_path, MY_SETTING="x", PYTHONDONTWRITEBYTECODE="1")
    assert subprocess.run(plain, cwd=repo, env=env, capture_output=True).returncode == 1
    monkeypatch.setenv("MY_SETTING", "x")

    run = run_ssw(tmp_path, repo, _script(passes=True), task="swap the operands of add")
    git(repo, "checkout", "-q", run.record.branch)
    verdict, shown = _ssw_gates(repo, MY_SETTING="x")

    assert (run.record.outcome, run.record.gates_verdict) == ("done", "passed")
    assert verdict == "passed", shown
    assert "verdict: passed" in shown


def test_a_gate_that_reaches_a_loopback_server_fails_ssw_gates_as_it_fails_the_run(
    tmp_path: Path, listener: socket.socket
):
    port = listener.getsockname()[1]
    repo = _repo(
        tmp_path / "repo",
        {
            ".stepswitch.toml": REACH_GATE,
            "reach.py": REACH.format(port=port),
            "calc/__init__.py": "",
            "calc/ops.py": ADD,
        },
    )
    assert subprocess.run(["python3", "reach.py"], cwd=repo).returncode == 0  # unconfined

    # The run's pre-flight finds the gate failing; the edit's gate run fails it again, and the
    # step limit ends the run before its triage.
    run = run_ssw(tmp_path, repo, _script(passes=False), task="swap", max_steps=6)
    git(repo, "checkout", "-q", run.record.branch)
    verdict, shown = _ssw_gates(repo)

    assert [(g.name, g.passed) for g in run.record.baseline_gates] == [("reach", False)]
    assert (run.record.outcome, run.record.gates_verdict) == ("limit", "failed")
    assert verdict == "failed", shown
    assert "verdict: FAILED at reach" in shown
