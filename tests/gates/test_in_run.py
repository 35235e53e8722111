"""A broken change fails the gates inside a real `ssw run`, whatever the layout and whatever
installs the project; a harmless one passes (so the gates test the worktree's code, not the
user's checkout). Each case is a fixture repository with its own .venv, driven through the real
CLI with the scripted provider; only run.json's `outcome` and `exit_code` are read."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git, write_repo
from tests.harness.task import (
    approve_and_summarize,
    done,
    explore,
    make_policy,
    tool,
    write_policy,
    write_script,
)

pytestmark = pytest.mark.slow

OPS = "def add(a, b):\n    return a + b\n"
# test_is_callable never runs add's body: the call map's stage is not the whole suite.
TEST = (
    "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_is_callable():\n    assert callable(add)\n"
)
GOOD, BAD, HARMLESS = "    return a + b", "    return a - b", "    return b + a"

LAYOUTS = {
    "src": {"src/calc/__init__.py": "", "src/calc/ops.py": OPS, "tests/test_ops.py": TEST},
    "flat": {"calc/__init__.py": "", "calc/ops.py": OPS, "tests/test_ops.py": TEST},
    "inside": {
        "calc/__init__.py": "",
        "calc/ops.py": OPS,
        "calc/tests/__init__.py": "",
        "calc/tests/test_ops.py": TEST,
    },
}
PROJECT = '[project]\nname = "calc"\nversion = "0.1.0"\n'
BACKENDS = {
    "setuptools": (
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    ),
    "hatchling": '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
}


def pyproject(layout: str, backend: str) -> str:
    text = BACKENDS[backend] + PROJECT
    if backend == "setuptools":
        where = '["src"]' if layout == "src" else '["."]'
        text += f'\n[tool.setuptools.packages.find]\nwhere = {where}\ninclude = ["calc*"]\n'
    else:
        text += '\n[tool.hatch.build.targets.wheel]\npackages = ["%s"]\n' % (
            "src/calc" if layout == "src" else "calc"
        )
    return text


def make_venv(repo: Path, install: str) -> None:
    """<repo>/.venv, seeing ssw's own site-packages (pytest, pip, setuptools, hatchling) through a
    .pth, with the project installed as `install` says: editable, plain or not at all."""
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "_ssw_test_tools.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    if install == "none":
        return
    args = ["-e", str(repo)] if install == "editable" else [str(repo)]
    subprocess.run(
        [
            *(str(venv / "bin" / "python"), "-m", "pip", "install", "-q"),
            *("--no-build-isolation", "--no-deps", "--disable-pip-version-check", *args),
        ],
        check=True,
        capture_output=True,
    )


def make_project(root: Path, layout: str, backend: str, install: str) -> Path:
    repo = write_repo(root, {**LAYOUTS[layout], "pyproject.toml": pyproject(layout, backend)})
    (repo / ".gitignore").write_text(".venv/\n*.egg-info/\nbuild/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "base")
    if install != "no-venv":
        make_venv(repo, install)
    return repo


def ops_path(layout: str) -> str:
    return "src/calc/ops.py" if layout == "src" else "calc/ops.py"


def ssw_run(folder: Path, repo: Path, replies: list[dict[str, object]]) -> tuple[int, dict]:
    policy = write_policy(folder, make_policy(escalation={"after_gate_failures": 1}))
    script = write_script(folder, replies)
    done_ = run_ssw_cli(
        ["run", str(repo), "--policy", str(policy), "--task", "Edit add.", "--script", str(script)],
        timeout=300,
    )
    runs = sorted((repo / ".ssw" / "runs").glob("*/run.json"))
    assert runs, done_.stdout + done_.stderr
    record = json.loads(runs[-1].read_text())
    return done_.returncode, record


def first_failing_gate(repo: Path) -> str:
    [steps] = sorted((repo / ".ssw" / "runs").glob("*/steps.jsonl"))[-1:]
    for line in steps.read_text().splitlines():
        event = json.loads(line)
        failed = [g["name"] for g in event.get("gates", []) if not g["passed"]]
        if event["kind"] == "gates" and failed:
            return str(failed[0])
    raise AssertionError(f"no gate failed in {steps}")


def broken(path: str) -> list[dict[str, object]]:
    return [
        *explore(),
        tool("edit", path=path, old=GOOD, new=BAD),
        done("changed add"),
        done("the test fails"),  # triage, on the last rung
        tool("edit", path=path, old=BAD, new=BAD + "  # still"),
        done("tried again"),
        *approve_and_summarize(),  # never asked for
    ]


def harmless(path: str) -> list[dict[str, object]]:
    return [
        *explore(),
        tool("edit", path=path, old=GOOD, new=HARMLESS),
        done("swapped the operands"),
        *approve_and_summarize(),
    ]


CASES = [
    ("src", "setuptools", "editable"),
    ("src", "hatchling", "editable"),
    ("flat", "setuptools", "editable"),
    ("inside", "hatchling", "editable"),
    ("src", "setuptools", "plain"),
    ("src", "setuptools", "none"),
    ("flat", "hatchling", "no-venv"),
]


def _ssw_run_on_a_project(
    tmp_path: Path, case: tuple[str, str, str], change: Callable[[str], list[dict[str, object]]]
) -> tuple[Path, int, dict]:
    """A project of `case` (layout, build backend, install) and `ssw run` making the `change` of
    its ops module: the repository, the exit code and run.json."""
    layout, backend, install = case
    repo = make_project(tmp_path / "repo", layout, backend, install)
    code, record = ssw_run(tmp_path, repo, change(ops_path(layout)))
    return repo, code, record


@pytest.mark.parametrize(("layout", "backend", "install"), CASES, ids=["-".join(c) for c in CASES])
def test_a_broken_change_fails_the_gates_inside_ssw_run(
    tmp_path: Path, layout: str, backend: str, install: str
) -> None:
    repo, code, record = _ssw_run_on_a_project(tmp_path, (layout, backend, install), broken)
    assert (code, record["outcome"], record["exit_code"]) == (1, "gates_failed", 1), record
    # The pre-flight traced the suite, so the first verdict came from the test that ran the
    # broken line, alone (the call map's stage), not from the import graph's.
    assert first_failing_gate(repo) == "tests:covered"
    # The user's checkout is untouched and still passes: the tests saw the worktree's code.
    assert GOOD in (repo / ops_path(layout)).read_text()


# A harmless change passes: on the layout of the first report (src/, an editable install) and on
# ssw's own Python (no venv). The other cases differ only in what the broken run already shows.
HARMLESS_CASES = [("src", "setuptools", "editable"), ("flat", "hatchling", "no-venv")]


@pytest.mark.parametrize(
    ("layout", "backend", "install"), HARMLESS_CASES, ids=["-".join(c) for c in HARMLESS_CASES]
)
def test_a_harmless_change_passes_the_gates_inside_ssw_run(
    tmp_path: Path, layout: str, backend: str, install: str
) -> None:
    _, code, record = _ssw_run_on_a_project(tmp_path, (layout, backend, install), harmless)
    assert (code, record["outcome"], record["exit_code"]) == (0, "done", 0), record


def test_ssw_gates_refuses_when_the_tests_would_import_the_users_checkout(
    tmp_path: Path,
) -> None:
    # A .pth that puts the checkout first on sys.path beats PYTHONPATH: the pre-flight says so.
    repo = make_project(tmp_path / "repo", "src", "setuptools", "none")
    site = next((repo / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "zz_first.pth").write_text(f"import sys; sys.path.insert(0, {str(repo / 'src')!r})\n")
    worktree = repo / ".ssw" / "worktrees" / "r1"
    git(repo, "worktree", "add", "-q", "-b", "ssw/r1", str(worktree))
    done_ = run_ssw_cli(["gates", str(worktree), "--changed", "src/calc/ops.py"])
    assert done_.returncode == 2
    text = done_.stdout + done_.stderr
    assert f"the tests would import calc from {repo / 'src' / 'calc' / '__init__.py'}" in text
    assert str(repo / ".venv" / "bin" / "python") in text
