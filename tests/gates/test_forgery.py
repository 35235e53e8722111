"""The gates' truth cannot be forged from the worktree: golden values, protected constants and the
protected paths are read from the base commit, and any change to a protected path (an edit, a
deletion, a rename either way, a mode change, a symbolic link), whatever git's index says, is a
failing verdict naming the path. Each case is a real git repository in tmp_path, changed the way
the agent's `run` tool could change it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from stepswitch.gates.config import CommandGate, GateConfig, GoldenGate, read_gate_config
from stepswitch.gates.suite import TRUTH_CHECK, GateSuite
from stepswitch.gates.truth_paths import protected_paths, protected_patterns
from tests.harness.repo import git, write_repo

PY = shlex.quote(sys.executable)
GOLDEN = "tests/golden/energies.json"
TABLE = "data/reference/table.csv"

PYPROJECT = f"""
[tool.stepswitch.gates.energies]
kind = "golden"
expected = "{GOLDEN}"
command = "{PY} -m model.run"
rtol = 1e-6

[tool.stepswitch.gates.constants]
kind = "protected"
paths = ["data/reference/**"]
constants = {{ "model/constants.py" = ["G"] }}
"""

FILES = {
    "pyproject.toml": PYPROJECT,
    GOLDEN: json.dumps({"e": [1.0, 2.0]}),
    TABLE: "a,b\n1,2\n",
    "model/__init__.py": "",
    "model/constants.py": "G = 6.674e-11\n",
    # The model's output is wrong: the golden gate fails until the code is fixed.
    "model/run.py": "import json\nprint(json.dumps({'e': [1.0, 2.5]}))\n",
    "README.md": "calc\n",
}


def make(root: Path) -> GateSuite:
    write_repo(root, FILES, commit=True)
    config = read_gate_config(root)
    assert config is not None
    return GateSuite(config, root, dict(os.environ))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tmp_path / "repo"


def truth_report(suite: GateSuite) -> str:
    result = suite.run(None, "HEAD")
    assert not result.passed
    assert result.stages == (TRUTH_CHECK,)  # it runs first and the gates after it do not
    assert result.not_run == ("energies", "constants")
    return result.report


def golden_gate(suite: GateSuite) -> GoldenGate:
    gate = suite.config.gates[0]
    assert isinstance(gate, GoldenGate)
    return gate


def test_the_untouched_tree_adds_no_verdict_of_the_truth_check(repo: Path) -> None:
    suite = make(repo)
    result = suite.run(None, "HEAD")
    assert result.stages == ("energies",)  # the golden values differ: the task's own failure
    assert "worst: e[1]: expected 2.0, actual 2.5" in result.report


def test_a_golden_file_rewritten_by_a_command_fails_and_the_values_stay_the_base_commits(
    repo: Path,
) -> None:
    suite = make(repo)
    (repo / GOLDEN).write_text(json.dumps({"e": [1.0, 2.5]}), encoding="utf-8")
    report = truth_report(suite)
    assert f"{GOLDEN}: modified, but it is the golden file of gate energies" in report
    # The golden gate itself still compares with the committed values.
    alone = suite.check(golden_gate(suite), "HEAD")
    assert not alone.passed and "expected 2.0, actual 2.5" in alone.report


def test_a_protected_file_moved_with_git_mv_fails_naming_both_paths(repo: Path) -> None:
    suite = make(repo)
    git(repo, "mv", TABLE, "data/table.csv")
    report = truth_report(suite)
    assert (
        f"{TABLE}: renamed to data/table.csv, but it is protected by gate constants "
        "('data/reference/**')"
    ) in report


def test_a_file_moved_into_a_protected_path_fails_naming_where_it_came_from(repo: Path) -> None:
    suite = make(repo)
    git(repo, "mv", "README.md", "data/reference/README.md")
    assert "data/reference/README.md: added (renamed from README.md), but it is protected" in (
        truth_report(suite)
    )


@pytest.mark.parametrize("how", ["rm", "git rm"])
def test_a_deleted_protected_file_fails(repo: Path, how: str) -> None:
    suite = make(repo)
    if how == "rm":
        (repo / TABLE).unlink()
    else:
        git(repo, "rm", "-q", TABLE)
    assert f"{TABLE}: deleted, but it is protected by gate constants" in truth_report(suite)


def test_a_protected_file_replaced_by_a_symbolic_link_fails(repo: Path) -> None:
    suite = make(repo)
    (repo / "data/copy.csv").write_text("a,b\n1,3\n", encoding="utf-8")
    (repo / TABLE).unlink()
    (repo / TABLE).symlink_to("../copy.csv")
    assert f"{TABLE}: replaced by a symbolic link to ../copy.csv" in truth_report(suite)


def test_a_protected_folder_swapped_for_a_link_to_a_copy_fails(repo: Path) -> None:
    suite = make(repo)
    shutil.move(repo / "data/reference", repo / "data/copy")
    (repo / "data/reference").symlink_to("copy")
    report = truth_report(suite)
    assert f"{TABLE}: reached through the symbolic link data/reference (to copy)" in report


def test_a_golden_file_turned_into_a_link_to_another_file_fails(repo: Path) -> None:
    suite = make(repo)
    (repo / "forged.json").write_text(json.dumps({"e": [1.0, 2.5]}), encoding="utf-8")
    (repo / GOLDEN).unlink()
    (repo / GOLDEN).symlink_to("../../forged.json")
    assert f"{GOLDEN}: replaced by a symbolic link to ../../forged.json" in truth_report(suite)


def test_a_mode_change_of_a_protected_file_fails(repo: Path) -> None:
    suite = make(repo)
    (repo / TABLE).chmod(0o755)
    assert f"{TABLE}: mode changed 100644 -> 100755, but it is protected" in truth_report(suite)


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_hiding_a_change_from_git_status_does_not_hide_it_from_the_gates(
    repo: Path, flag: str
) -> None:
    suite = make(repo)
    git(repo, "update-index", flag, GOLDEN)
    (repo / GOLDEN).write_text(json.dumps({"e": [1.0, 2.5]}), encoding="utf-8")
    assert git(repo, "status", "--porcelain") == ""  # git itself sees nothing
    assert f"{GOLDEN}: modified" in truth_report(suite)


def test_a_new_link_outside_the_worktree_or_into_a_protected_path_fails(repo: Path) -> None:
    suite = make(repo)
    outside = repo.parent / "elsewhere.json"
    outside.write_text("{}", encoding="utf-8")
    (repo / "model/values.json").symlink_to(outside)
    (repo / "model/table.csv").symlink_to("../data/reference/table.csv")
    (repo / "model/reference").symlink_to("../data")
    report = truth_report(suite)
    assert f"model/values.json: a new symbolic link to {outside}, outside the worktree" in report
    assert (
        "model/table.csv: a new symbolic link to ../data/reference/table.csv, into "
        f"{TABLE}, which is protected by gate constants"
    ) in report
    assert f"model/reference: a new symbolic link to ../data, into data, which holds {TABLE}" in (
        report
    )


def test_a_committed_link_left_as_it_was_passes(repo: Path) -> None:
    write_repo(repo, {"docs/README.md": "x\n"})
    (repo / "docs/hosts").symlink_to("/etc/hostname")
    check = make(repo).truth_check("HEAD")
    assert check is not None and check.passed, check


def test_tool_leftovers_under_a_protected_folder_are_no_change(repo: Path) -> None:
    suite = make(repo)
    (repo / "data/reference/__pycache__").mkdir()
    (repo / "data/reference/__pycache__/x.cpython-311.pyc").write_bytes(b"\0")
    check = suite.truth_check("HEAD")
    assert check is not None and check.passed, check


def test_a_replaced_golden_object_does_not_change_the_expected_values(repo: Path) -> None:
    suite = make(repo)
    forged = repo / "forged.json"
    forged.write_text(json.dumps({"e": [1.0, 2.5]}), encoding="utf-8")
    new = git(repo, "hash-object", "-w", str(forged)).strip()
    old = git(repo, "rev-parse", f"HEAD:{GOLDEN}").strip()
    git(repo, "replace", old, new)
    assert json.loads(git(repo, "show", f"HEAD:{GOLDEN}")) == {"e": [1.0, 2.5]}
    alone = suite.check(golden_gate(suite), "HEAD")
    assert not alone.passed and "expected 2.0, actual 2.5" in alone.report


def test_a_worktree_whose_git_file_is_replaced_still_reads_the_base_commit(repo: Path) -> None:
    make(repo)
    worktree = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    base = git(repo, "rev-parse", "HEAD").strip()
    config = read_gate_config(worktree)
    assert config is not None
    suite = GateSuite(config, worktree, dict(os.environ))  # made before any edit
    (worktree / ".git").write_text(f"gitdir: {repo.parent / 'fake'}\n", encoding="utf-8")
    (worktree / GOLDEN).write_text(json.dumps({"e": [1.0, 2.5]}), encoding="utf-8")
    result = suite.run(None, base)
    assert result.stages == (TRUTH_CHECK,)
    assert f"{GOLDEN}: modified" in result.report


def test_the_tools_refuse_exactly_the_paths_the_truth_check_guards(repo: Path) -> None:
    write_repo(repo, FILES)
    config = read_gate_config(repo)
    assert config is not None
    assert protected_paths(config) == tuple(protected_patterns(config))
    assert protected_paths(config) == (
        ".stepswitch.toml",
        "pyproject.toml",
        GOLDEN,
        "data/reference/**",
    )


def test_a_changed_gate_configuration_fails_the_truth_check(repo: Path) -> None:
    suite = make(repo)
    with (repo / "pyproject.toml").open("a", encoding="utf-8") as out:
        out.write("\n[tool.ruff]\n")
    (repo / ".stepswitch.toml").write_text("[gates]\n", encoding="utf-8")
    report = truth_report(suite)
    assert "pyproject.toml: modified, but it is where the gates are configured" in report
    assert ".stepswitch.toml: added, but it is where the gates are configured" in report


def test_outside_a_repository_there_is_no_truth_check(tmp_path: Path) -> None:
    write_repo(tmp_path, FILES)
    config = read_gate_config(tmp_path)
    assert config is not None
    suite = GateSuite(config, tmp_path, dict(os.environ))
    assert suite.base is None and suite.truth_check("HEAD") is None


def test_a_repository_without_commits_has_no_truth_check_but_an_unknown_commit_fails(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, {"README.md": "x\n"})
    git(tmp_path, "init", "-q")
    config = GateConfig((CommandGate(name="lint", command="true"),), "test")
    suite = GateSuite(config, tmp_path, dict(os.environ))
    assert suite.run(None, "HEAD").stages == ("lint",)  # `ssw gates` on a fresh repository
    result = suite.run(None, "0" * 40)  # a run's base commit that cannot be read
    assert result.stages == (TRUTH_CHECK,) and "cannot read the base commit" in result.report
