"""What ssw's start costs: `ssw gates` imports what running gates needs and nothing of a task
run, the bench or the exporters; and ssw keeps its own bytecode whatever
PYTHONDONTWRITEBYTECODE says, while the gates still run without writing any (ADR 0075). Fresh
interpreters (not the tests' zygote, which has imported ssw already)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from tests.harness.cli import ssw_env
from tests.harness.repo import write_repo

PY = shlex.quote(sys.executable)
# Modules of a task run, the bench, claims, the page and the exporters: none is for `ssw gates`.
NOT_FOR_GATES = (
    "httpx",
    "stepswitch.agent.machine",
    "stepswitch.ledger",
    "stepswitch.wire",
    "stepswitch.bench",
    "stepswitch.claims",
    "stepswitch.site",
    "opentelemetry",
)


def _repo(root: Path, command: str) -> Path:
    gates = f"[tool.stepswitch.gates.check]\ncommand = {json.dumps(command)}\n"
    files = {"calc/__init__.py": "", "calc/ops.py": "X = 1\n", "pyproject.toml": gates}
    return write_repo(root, files, commit=True)


def test_ssw_gates_imports_nothing_of_a_task_run_and_its_gates_write_no_bytecode(
    tmp_path: Path,
) -> None:
    # The gate passes only when its Python was told not to write bytecode.
    gate = f'{PY} -c "import sys, calc.ops; sys.exit(0 if sys.flags.dont_write_bytecode else 3)"'
    repo = _repo(tmp_path / "repo", gate)
    said = tmp_path / "imported.json"
    code = (
        "import atexit, json, sys\n"
        f"names = {NOT_FOR_GATES!r}\n"
        "def say():\n"
        f"    open({str(said)!r}, 'w').write(json.dumps("
        "[n for n in names if n in sys.modules]))\n"
        "atexit.register(say)\n"
        "from stepswitch.cli import main\n"
        f"sys.argv = ['ssw', 'gates', {str(repo)!r}, '--sandbox', 'none']\n"
        "main()\n"
    )
    env = ssw_env()
    del env["PYTHONDONTWRITEBYTECODE"]  # as most users run ssw: the gates are told all the same
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass  check" in done.stdout
    assert json.loads(said.read_text()) == []
    assert not any(p.name == "__pycache__" for p in repo.rglob("*")), os.listdir(repo / "calc")


def test_ssw_keeps_its_own_bytecode_when_the_environment_says_to_write_none(
    tmp_path: Path,
) -> None:
    prefix = tmp_path / "pycache"  # ssw's bytecode lands here, not beside its sources
    env = ssw_env(PYTHONPYCACHEPREFIX=str(prefix))
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    done = subprocess.run(
        [sys.executable, "-m", "stepswitch", "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    kept = {
        f"{p.parent.parent.name}/{p.parent.name}/{p.name.split('.')[0]}"
        for p in prefix.rglob("*.pyc")
    }
    assert "stepswitch/cli/app" in kept, sorted(kept)


def test_the_replay_page_a_run_writes_at_its_end_imports_no_grading_or_validation() -> None:
    code = (
        "import sys, stepswitch.site.build\n"
        "print([n for n in sys.modules if n.startswith(('stepswitch.bench.grading', "
        "'stepswitch.bench.valid', 'stepswitch.bench.task'))])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=ssw_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
