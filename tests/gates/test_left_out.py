"""In a run's worktree the gates judge only what the run's commit holds: a file below an import
root that the commit leaves out (ignored by the tree's .gitignore, GitHub's stock Python one
here) and that Python or pytest would load fails `ssw:left-out` naming it, before any test runs.
Each control shows the file really is outside the commit and really changes the verdict. A
correct change in a tree with a virtual environment, a `.env` and caches passes, and `ssw gates`
on the user's own checkout does not judge their ignored files (ADR 0047)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.interpreter import Interpreter
from stepswitch.gates.left_out import LEFT_OUT_CHECK
from stepswitch.gates.suite import GateSuite
from stepswitch.util.git_checkouts import checkout_tree
from stepswitch.util.git_objects import MAX_FILE_BYTES
from tests.gates import scratch_env
from tests.gates.test_tree_plugins import BUGGY, RIGGING, plant_plugin
from tests.harness.repo import write_repo

# The lines of GitHub's Python .gitignore these tests rely on.
STOCK_GITIGNORE = "__pycache__/\n*.so\nbuild/\n*.egg-info/\n.env\n.venv\nvenv/\n.pytest_cache/\n"
FIXED = {**BUGGY, "calc/ops.py": "def add(a, b):\n    return a + b\n"}


def _suite(root: Path, home: Path, run: bool = True) -> GateSuite:
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    gate = TestsGate(name="tests", kind="tests", command=command, timeout_s=120.0)
    return GateSuite(
        GateConfig((gate,), "test"),
        root,
        scratch_env(home),
        interpreter=Interpreter(Path(sys.executable), "the test's"),
        tree=checkout_tree(root) if run else None,
    )


def _run(suite: GateSuite) -> tuple[bool, tuple[str, ...], str]:
    try:
        result = suite.run(None)
    finally:
        suite.close()
    return result.passed, result.stages, result.report


def _committed(root: Path) -> set[str]:
    tree = checkout_tree(root)
    assert tree is not None
    return set(tree.snapshot()[0])


def test_an_ignored_egg_info_plugin_fails_the_gates_naming_it(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", {**BUGGY, ".gitignore": STOCK_GITIGNORE}, commit=True)
    plant_plugin(root, "x.egg-info")

    passed, stages, report = _run(_suite(root, tmp_path / "home"))

    assert not passed and stages == (LEFT_OUT_CHECK,)
    assert "x.egg-info/entry_points.txt: a distribution's metadata" in report
    # Control: the commit would carry the plugin's module but not the metadata that loads it.
    assert "xplug.py" in _committed(root)
    assert "x.egg-info/entry_points.txt" not in _committed(root)


@pytest.mark.parametrize(
    ("ignored", "path", "text"),
    [
        # The change imports a module the commit leaves out: the commit shows only the import.
        ("calc/_impl.py", "calc/_impl.py", "def add(a, b):\n    return a + b\n"),
        # A conftest.py that turns failures into passes, which as-before never sees either.
        ("conftest.py", "tests/conftest.py", RIGGING),
        ("*.pth", "zz.pth", "import os\n"),
    ],
    ids=["module", "conftest", "pth"],
)
def test_an_ignored_file_python_would_load_fails_the_gates_naming_it(
    tmp_path: Path, ignored: str, path: str, text: str
) -> None:
    files = {**BUGGY, ".gitignore": f"{STOCK_GITIGNORE}{ignored}\n"}
    root = write_repo(tmp_path / "repo", files, commit=True)
    if path == "calc/_impl.py":
        (root / "calc/ops.py").write_text("from calc._impl import add  # noqa: F401\n")
    (root / path).write_text(text)

    passed, stages, report = _run(_suite(root, tmp_path / "home"))

    assert not passed and stages == (LEFT_OUT_CHECK,)
    assert f"{path}: importable, and the commit leaves it out" in report
    assert path not in _committed(root)  # control: git leaves it out of the commit


def test_control_without_the_check_the_ignored_conftest_rigs_the_verdict(tmp_path: Path) -> None:
    files = {**BUGGY, ".gitignore": f"{STOCK_GITIGNORE}conftest.py\n"}
    root = write_repo(tmp_path / "repo", files, commit=True)
    (root / "tests/conftest.py").write_text(RIGGING)

    passed, _, _ = _run(_suite(root, tmp_path / "home", run=False))

    assert passed  # `ssw gates` on a folder judges it as it is: the rigged tests "pass"


def test_a_correct_change_beside_a_venv_an_env_file_and_caches_passes(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", {**FIXED, ".gitignore": STOCK_GITIGNORE}, commit=True)
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    for venv in (root / ".venv", root / "venv"):
        (venv / "lib").mkdir(parents=True)
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (venv / "bin").mkdir()
        (venv / "bin" / "activate_this.py").write_text("")
    site.mkdir(parents=True)
    (site / "six.py").write_text("")
    (root / ".env").write_text("TOKEN=x\n")
    (root / ".pytest_cache").mkdir()
    (root / ".pytest_cache" / "README.md").write_text("")
    (root / "calc" / "__pycache__").mkdir()
    (root / "calc" / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"")

    passed, stages, report = _run(_suite(root, tmp_path / "home"))

    assert passed, report
    assert LEFT_OUT_CHECK not in stages


def test_ssw_gates_on_the_users_checkout_does_not_judge_their_ignored_files(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", {**FIXED, ".gitignore": STOCK_GITIGNORE}, commit=True)
    (root / "calc.egg-info").mkdir()
    (root / "calc.egg-info" / "PKG-INFO").write_text("Name: calc\n")
    (root / "build" / "lib" / "calc").mkdir(parents=True)
    (root / "build" / "lib" / "calc" / "ops.py").write_text("")

    passed, _, report = _run(_suite(root, tmp_path / "home", run=False))

    assert passed, report


def test_a_module_too_big_for_the_commit_fails_the_gates_naming_it(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", {**BUGGY, ".gitignore": STOCK_GITIGNORE}, commit=True)
    (root / "calc/ops.py").write_text("from calc._big import add  # noqa: F401\n")
    with (root / "calc/_big.py").open("w") as big:  # past git_objects.MAX_FILE_BYTES
        big.write("def add(a, b):\n    return a + b\n")
        big.truncate(MAX_FILE_BYTES + 1)

    passed, stages, report = _run(_suite(root, tmp_path / "home"))

    assert not passed and stages == (LEFT_OUT_CHECK,)
    assert "calc/_big.py: importable, and the commit leaves it out" in report
    assert "calc/_big.py" not in _committed(root)  # control: the snapshot leaves it out


def test_an_ignored_conftest_beside_tests_in_a_folder_python_cannot_import_is_named(
    tmp_path: Path,
) -> None:
    # pytest collects `my-tests/` and reads its conftest.py, though no import reaches the folder.
    files = {
        **{k.replace("tests/", "my-tests/"): v for k, v in BUGGY.items()},
        ".gitignore": f"{STOCK_GITIGNORE}conftest.py\n",
    }
    root = write_repo(tmp_path / "repo", files, commit=True)
    (root / "my-tests/conftest.py").write_text(RIGGING)

    passed, stages, report = _run(_suite(root, tmp_path / "home"))

    assert not passed and stages == (LEFT_OUT_CHECK,)
    assert "my-tests/conftest.py: importable, and the commit leaves it out" in report
    assert _run(_suite(root, tmp_path / "home", run=False))[0]  # control: it rigs the tests
