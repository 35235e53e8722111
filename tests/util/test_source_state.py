"""One rule of a clean tree for every producer of evidence (issue 44, util/source_state.py): each
way to run code a commit does not hold is dirty, named; a clean checkout is not (the control)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.util.source_state import source_state, startup_changes, stray_pth_files
from tests.harness.repo import git, write_repo

FILES = {
    "src/pkg/__init__.py": "VALUE = 1\n",
    "src/pkg/core.py": "def f():\n    return 1\n",
    "pyproject.toml": "[project]\nname = 'pkg'\n",
    ".gitignore": "*.local.py\n",
    "results/out.json": "{}\n",
}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo", FILES, commit=True)


def state(top: Path):
    return source_state(top, startup=())


def test_a_clean_checkout_is_clean(checkout: Path) -> None:
    found = state(checkout)
    assert (found.dirty, found.why) == (False, ())
    assert found.commit == git(checkout, "rev-parse", "HEAD").strip()


def test_a_changed_source_file_is_dirty_but_a_producers_results_are_not(checkout: Path) -> None:
    (checkout / "results" / "out.json").write_text('{"new": 1}\n')
    assert state(checkout).dirty is False  # results written beside the code are not the code
    (checkout / "src" / "pkg" / "core.py").write_text("def f():\n    return 2\n")
    found = state(checkout)
    assert found.dirty is True
    assert found.why == ("tracked files changed: src/pkg/core.py",)


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_file_git_was_told_not_to_look_at_is_dirty(checkout: Path, flag: str) -> None:
    git(checkout, "update-index", flag, "src/pkg/core.py")
    (checkout / "src" / "pkg" / "core.py").write_text("def f():\n    return 2\n")
    assert git(checkout, "status", "--porcelain") == ""  # the control: git status sees nothing
    found = state(checkout)
    assert found.dirty is True
    assert found.why == (
        "index entries git does not look at (assume-unchanged or skip-worktree): src/pkg/core.py",
    )


@pytest.mark.parametrize("name", ["extra.py", "settings.local.py", "excluded.py"])
def test_an_untracked_file_under_src_is_dirty_ignored_or_excluded_or_not(
    checkout: Path, name: str
) -> None:
    (checkout / ".git" / "info" / "exclude").write_text("excluded.py\n")
    (checkout / "src" / "pkg" / name).write_text("VALUE = 2\n")
    found = state(checkout)
    assert found.dirty is True
    assert found.why == (f"files git does not track under src: src/pkg/{name}",)


def test_bytecode_caches_under_src_are_not_dirty(checkout: Path) -> None:
    cache = checkout / "src" / "pkg" / "__pycache__"
    cache.mkdir()
    (cache / "core.cpython-311.pyc").write_bytes(b"\0")
    assert state(checkout).dirty is False


def test_a_start_up_that_runs_code_no_package_ships_is_dirty(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "paths.pth").write_text("/some/folder\n")  # a path only: runs nothing
    (site / "zz.pth").write_text("import os; os.environ['X'] = '1'\n")
    assert stray_pth_files([str(site)]) == [str(site / "zz.pth")]
    why = startup_changes(
        environ={"PYTHONPATH": "/elsewhere", "HOME": "/root"},
        modules=["sys", "sitecustomize"],
        site_folders=[str(site)],
    )
    assert why == [
        "PYTHONPATH is set",
        "sitecustomize was loaded at start-up",
        f"{site / 'zz.pth'} runs code at every start-up and no installed package ships it",
    ]
    assert startup_changes(environ={}, modules=["sys"], site_folders=[]) == []  # the control


def test_the_pth_files_installed_packages_ship_are_not_strays() -> None:
    import site

    folders = [*site.getsitepackages(), site.getusersitepackages()]
    shipped = [p for f in folders if Path(f).is_dir() for p in Path(f).glob("*.pth")]
    assert shipped  # this venv has some (setuptools', the editable install's)
    assert stray_pth_files(folders) == []


def test_the_start_up_joins_the_reasons(checkout: Path) -> None:
    found = source_state(checkout, startup=["PYTHONPATH is set"])
    assert (found.dirty, found.why) == (True, ("PYTHONPATH is set",))


def test_not_a_checkout_is_unknown(tmp_path: Path) -> None:
    found = source_state(tmp_path, startup=())
    assert (found.commit, found.dirty) == (None, None)
