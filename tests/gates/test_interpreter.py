from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from stepswitch.errors import ConfigError, UsageError
from stepswitch.gates.interpreter import (
    Interpreter,
    check_imports,
    find_interpreter,
    gate_environment,
    project_layout,
)
from tests.harness.repo import write_repo

CALC = "def add(a, b):\n    return a + b\n"


def fake_python(folder: Path) -> Path:
    """An executable named python in folder/bin, inside a pyvenv.cfg folder."""
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = folder / "bin" / "python"
    python.write_text("#!/bin/sh\nexit 0\n")
    python.chmod(0o755)
    return python


def test_the_repository_venv_is_chosen_before_an_active_virtualenv(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "repo", {"calc/__init__.py": ""})
    own = fake_python(repo / ".venv")
    active = fake_python(tmp_path / "active")
    found = find_interpreter(repo, {"VIRTUAL_ENV": str(active.parent.parent)})
    assert (found.python, found.source) == (own, "the repository's .venv")


def test_a_run_worktree_uses_the_venv_of_the_users_checkout(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "repo", {"calc/__init__.py": ""})
    own = fake_python(repo / "venv")
    worktree = write_repo(repo / ".ssw" / "worktrees" / "r1", {"calc/__init__.py": ""})
    assert find_interpreter(worktree, {}).python == own


def test_an_active_virtualenv_comes_next_then_ssws_own_python_said_plainly(
    tmp_path: Path,
) -> None:
    repo = write_repo(tmp_path / "repo", {"calc/__init__.py": ""})
    active = fake_python(tmp_path / "active")
    assert find_interpreter(repo, {"VIRTUAL_ENV": str(active.parent.parent)}).python == active
    own = find_interpreter(repo, {})
    assert own.python == Path(sys.executable)
    assert "ssw's own Python" in own.line()


def test_the_python_setting_overrides_the_detected_one(tmp_path: Path) -> None:
    repo = write_repo(
        tmp_path / "repo",
        {"pyproject.toml": '[tool.stepswitch]\npython = "envs/test/bin/python"\n'},
    )
    fake_python(repo / ".venv")
    chosen = fake_python(repo / "envs" / "test")
    found = find_interpreter(repo, {})
    assert found.python == chosen
    assert found.source == "set by pyproject.toml tool.stepswitch.python"


def test_a_python_setting_that_is_no_executable_is_a_config_error_naming_the_key(
    tmp_path: Path,
) -> None:
    repo = write_repo(tmp_path / "repo", {".stepswitch.toml": 'python = "nope/python"\n'})
    with pytest.raises(ConfigError, match=r"^\.stepswitch\.toml: python: 'nope/python'"):
        find_interpreter(repo, {})


@pytest.mark.parametrize(
    ("files", "source", "packages"),
    [
        ({"src/calc/__init__.py": "", "tests/test_x.py": ""}, "src", ("calc",)),
        ({"calc/__init__.py": "", "tests/__init__.py": "", "docs/conf.py": ""}, "", ("calc",)),
        ({"calc/__init__.py": "", "calc/test/__init__.py": ""}, "", ("calc",)),
    ],
    ids=["src", "flat", "tests-inside"],
)
def test_the_layout_gives_the_source_root_and_the_top_level_packages(
    tmp_path: Path, files: dict[str, str], source: str, packages: tuple[str, ...]
) -> None:
    write_repo(tmp_path, files)
    layout = project_layout(tmp_path)
    assert layout.source_root == (tmp_path / source if source else tmp_path)
    assert layout.packages == packages


def _sys_path(python: Path, cwd: Path, env: dict[str, str]) -> list[str]:
    code = "import json, sys; print(json.dumps(sys.path))"
    done = subprocess.run(
        [str(python), "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout))


def test_the_gate_environment_activates_the_interpreters_virtualenv(tmp_path: Path) -> None:
    write_repo(tmp_path, {"src/calc/__init__.py": ""})
    venv = tmp_path / "venv"
    python = fake_python(venv)
    found = find_interpreter(tmp_path, {"VIRTUAL_ENV": str(venv)})
    env = gate_environment(tmp_path, {"PYTHONPATH": "/elsewhere", "PATH": "/usr/bin"}, found)
    assert env["PATH"].split(os.pathsep)[0] == str(python.parent)
    assert env["VIRTUAL_ENV"] == str(venv)


def test_the_gates_python_has_the_worktree_source_first_then_the_pythonpath_it_had(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, {"src/calc/__init__.py": ""})
    python = Path(sys.executable)
    given = {**os.environ, "PYTHONPATH": "/elsewhere"}
    env = gate_environment(tmp_path, given, Interpreter(python, "ssw's own"))
    path = _sys_path(python, tmp_path, env)
    site_packages = next(i for i, p in enumerate(path) if p.endswith("site-packages"))
    # `-c` puts "" first; then the source folder and the given PYTHONPATH, before the stdlib.
    assert path[:3] == ["", str(tmp_path / "src"), "/elsewhere"]
    assert site_packages > 2


def test_a_gate_environment_made_from_a_gate_environment_keeps_the_first_ones_folders(
    tmp_path: Path,
) -> None:
    # ssw started by a gate (its own tests): what the outer gates put first still comes next.
    outer, inner = (write_repo(tmp_path / n, {"src/calc/__init__.py": ""}) for n in ("o", "i"))
    python = Path(sys.executable)
    given = {**os.environ, "PYTHONPATH": "/elsewhere"}
    env = gate_environment(outer, given, Interpreter(python, "ssw's own"))
    env = gate_environment(inner, env, Interpreter(python, "ssw's own"))
    path = _sys_path(python, tmp_path, env)
    assert path[:4] == ["", str(inner / "src"), str(outer / "src"), "/elsewhere"]


def test_a_sitecustomize_in_the_worktree_does_not_run_when_the_gates_python_starts(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "started"
    hostile = f"open({str(marker)!r}, 'a').write('ran')\n"
    write_repo(tmp_path, {"calc/__init__.py": CALC, "sitecustomize.py": hostile})
    python = Path(sys.executable)
    env = gate_environment(tmp_path, dict(os.environ), Interpreter(python, "ssw's own"))
    path = _sys_path(python, tmp_path, env)
    assert path[1] == str(tmp_path)  # the flat layout's source folder: the worktree itself
    assert not marker.exists()
    old = {**env, "PYTHONPATH": str(tmp_path)}  # the control: the worktree on PYTHONPATH
    _sys_path(python, tmp_path, old)
    assert marker.read_text() == "ran"


def test_the_interpreters_own_sitecustomize_still_runs_before_the_worktree_is_on_the_path(
    tmp_path: Path,
) -> None:
    if Path(sysconfig.get_path("stdlib"), "sitecustomize.py").exists():
        # Debian's Python: its own sitecustomize comes first on sys.path; a venv's never runs.
        pytest.skip("this Python's standard library has a sitecustomize of its own")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    seen = tmp_path / "seen.json"
    (site / "sitecustomize.py").write_text(
        f"import json, sys\nopen({str(seen)!r}, 'w').write(json.dumps(sys.path))\n"
    )
    worktree = write_repo(tmp_path / "wt", {"src/calc/__init__.py": CALC})
    python = venv / "bin" / "python"
    env = gate_environment(worktree, dict(os.environ), Interpreter(python, "a venv"))
    path = _sys_path(python, worktree, env)
    assert path[1] == str(worktree / "src")
    assert str(worktree / "src") not in json.loads(seen.read_text())  # it ran before


def test_the_pre_flight_finds_the_worktrees_code_with_the_gate_environment(
    tmp_path: Path,
) -> None:
    worktree = write_repo(tmp_path / "wt", {"src/calc/__init__.py": CALC})
    found = find_interpreter(worktree, {})
    env = gate_environment(worktree, dict(os.environ), found)
    check = check_imports(worktree, env, found)
    assert check.found == {"calc": str(worktree / "src" / "calc" / "__init__.py")}


def test_the_pre_flight_refuses_when_the_tests_would_import_another_checkout(
    tmp_path: Path,
) -> None:
    # What an editable install of the user's checkout does when nothing puts the worktree first.
    users = write_repo(tmp_path / "user", {"src/calc/__init__.py": CALC})
    worktree = write_repo(tmp_path / "wt", {"src/calc/__init__.py": CALC})
    found = find_interpreter(worktree, {})
    env = {**os.environ, "PYTHONPATH": str(users / "src")}
    with pytest.raises(UsageError) as refused:
        check_imports(worktree, env, found)
    message = str(refused.value)
    assert "\n" not in message
    assert f"the tests would import calc from {users / 'src' / 'calc' / '__init__.py'}" in message
    assert "outside the run's worktree" in message and str(found.python) in message


def test_the_pre_flight_refuses_when_the_project_does_not_import(tmp_path: Path) -> None:
    worktree = write_repo(tmp_path, {"calc/__init__.py": "import not_installed_anywhere\n"})
    found = find_interpreter(worktree, {})
    env = gate_environment(worktree, dict(os.environ), found)
    with pytest.raises(UsageError, match=r"cannot import calc with .*not_installed_anywhere"):
        check_imports(worktree, env, found)
