"""`ssw runs apply` writes nothing over what git does not track in the user's checkout: a run's
branch given hostile commits (what a model, or whoever could write the branch, could make),
applied as the user applies it, through the real CLI onto a copy of one real scripted run's
repository. Each attack has a control: plain git on a copy does the harm, or the same change
without the hostile bit applies."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.harness.repo import git
from tests.harness.task import FIX_LINE

from .apply_runs import (
    MERGE_AND_PICK,
    OPS,
    SECRET,
    _git_in,
    commit_on_run_branch,
    finished,
    head,
    plain_git_merge,
    repo,
    run_id,
    set_record,
    ssw,
    the_ignored_files_are_intact,
    user_commits,
    venv_and_secrets,
)

__all__ = ["finished", "repo", "run_id"]  # fixtures


# --- what git does not track ---


@MERGE_AND_PICK
def test_apply_refuses_a_change_that_would_write_over_what_the_checkout_ignores(
    repo: Path, run_id: str, tmp_path: Path, how: list[str]
):
    venv_and_secrets(repo)
    commit_on_run_branch(
        repo,
        run_id,
        {
            ".gitignore": b"",
            ".env": b"API_TOKEN=the model's\n",
            "data": b"not a folder\n",
            "env/lib/python3.11/site-packages/zz.pth": b"import os; os.system('id')\n",
        },
    )
    control = plain_git_merge(repo, run_id, tmp_path)
    assert (control / ".env").read_text() == "API_TOKEN=the model's\n"
    assert (control / "data").is_file()
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id, *how)
    forced = ssw(repo, "runs", "apply", run_id, *how, "--force")

    assert result.returncode == 2 and forced.stderr == result.stderr
    assert result.stderr == (
        f"ssw: run {run_id} would write where your checkout has what git does not track: "
        f".env, data/, env/; nothing was changed (fix: move them aside first; `ssw runs show "
        f"{run_id} --diff` shows the change)\n"
    )
    assert head(repo) == before and git(repo, "status", "--porcelain") == ""
    the_ignored_files_are_intact(repo)
    shown = ssw(repo, "runs", "show", run_id).stdout
    assert (
        "apply: would refuse: would write where your checkout has what git does not track: "
        ".env, data/, env/; nothing was changed" in shown
    )


def test_a_cherry_pick_of_a_file_added_then_removed_is_judged_commit_by_commit(
    repo: Path, run_id: str
):
    venv_and_secrets(repo)
    commit_on_run_branch(repo, run_id, {".env": b"API_TOKEN=the model's\n"})
    commit_on_run_branch(repo, run_id, {".env": None})  # the branch's whole diff leaves it out

    picked = ssw(repo, "runs", "apply", run_id, "--cherry-pick")

    assert picked.returncode == 2 and "does not track: .env;" in picked.stderr
    assert (repo / ".env").read_text() == SECRET
    merged = ssw(repo, "runs", "apply", run_id)  # the merge writes the end state: no .env
    assert merged.returncode == 0, merged.stderr
    assert (repo / ".env").read_text() == SECRET


def test_a_folder_above_a_written_path_that_is_an_ignored_file_refuses(repo: Path, run_id: str):
    user_commits(repo, {".gitignore": "notes\n"})
    (repo / "notes").write_text("the user's notes\n")
    commit_on_run_branch(repo, run_id, {"notes/todo.py": b"x = 1\n"})

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 2 and "does not track: notes;" in result.stderr
    assert (repo / "notes").read_text() == "the user's notes\n"


def test_a_branch_that_moved_after_its_record_is_judged_by_what_it_now_holds(
    repo: Path, run_id: str
):
    venv_and_secrets(repo)
    judged = git(repo, "rev-parse", f"ssw/{run_id}").strip()
    commit_on_run_branch(repo, run_id, {"calc/extra.py": b"y = 2\n"}, record_it=False)

    moved = ssw(repo, "runs", "apply", run_id)

    assert moved.returncode == 2
    assert f"its branch moved past the commit its gates judged ({judged[:12]} ->" in moved.stderr
    commit_on_run_branch(repo, run_id, {".env": b"API_TOKEN=the model's\n"}, record_it=False)
    forced = ssw(repo, "runs", "apply", run_id, "--force")
    assert forced.returncode == 2 and "does not track: .env;" in forced.stderr
    assert (repo / ".env").read_text() == SECRET


def test_a_change_writing_into_ssws_own_folder_is_refused(repo: Path, run_id: str):
    record = f".ssw/runs/{run_id}/run.json"
    commit_on_run_branch(repo, run_id, {record: b"{}"}, record_it=False)
    set_record(repo, run_id, commit=git(repo, "rev-parse", f"ssw/{run_id}").strip())
    kept = (repo / record).read_text()

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 2 and "does not track: .ssw/;" in result.stderr
    assert (repo / record).read_text() == kept


def test_a_tree_made_by_hand_with_a_dot_dot_entry_is_refused_before_git_looks(
    repo: Path, run_id: str
):
    unused = repo.parent / "unused-index"
    blob = _git_in(repo, "hash-object", "-w", "--stdin", index=unused, stdin=b"planted\n")
    inner = _git_in(
        repo, "mktree", index=unused, stdin=f"100644 blob {blob}\tplanted.txt\n".encode()
    )
    tip = git(repo, "rev-parse", f"ssw/{run_id}").strip()
    listing = git(repo, "ls-tree", tip) + f"040000 tree {inner}\t..\n"
    tree = _git_in(repo, "mktree", index=unused, stdin=listing.encode())
    commit = git(repo, "commit-tree", tree, "-p", tip, "-m", "a tree made by hand")
    git(repo, "update-ref", f"refs/heads/ssw/{run_id}", commit.strip())
    set_record(repo, run_id, commit=commit.strip())
    assert "../planted.txt" in git(repo, "ls-tree", "-r", "--name-only", commit.strip())

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 2
    assert "its commits hold paths no checkout may have: ../planted.txt" in result.stderr
    assert not (repo.parent / "planted.txt").exists()


def test_a_change_of_hundreds_of_files_is_judged_whole(repo: Path, run_id: str):
    venv_and_secrets(repo)
    index = repo.parent / "index-many"
    _git_in(repo, "read-tree", f"ssw/{run_id}", index=index)
    blob = _git_in(repo, "hash-object", "-w", "--stdin", index=index, stdin=b"x = 1\n")
    many = "".join(f"100644 {blob}\tgen/m{i}.py\n" for i in range(400))
    _git_in(repo, "update-index", "--index-info", index=index, stdin=many.encode())
    tip = git(repo, "rev-parse", f"ssw/{run_id}").strip()
    commit = git(
        repo, "commit-tree", _git_in(repo, "write-tree", index=index), "-p", tip, "-m", "m"
    )
    git(repo, "update-ref", f"refs/heads/ssw/{run_id}", commit.strip())
    set_record(repo, run_id, commit=commit.strip())
    applied = Path(shutil.copytree(repo, repo.parent / "applied", symlinks=True))
    commit_on_run_branch(repo, run_id, {"gen/m399.py": b"x = 2\n", ".env": b"X=1\n"})

    refused = ssw(repo, "runs", "apply", run_id)
    done = ssw(applied, "runs", "apply", run_id)  # the control: the same change without .env

    assert refused.returncode == 2 and "does not track: .env;" in refused.stderr
    assert done.returncode == 0, done.stderr
    assert len(list((applied / "gen").iterdir())) == 400


def test_a_file_the_run_turned_into_a_folder_is_applied(repo: Path, run_id: str):
    commit_on_run_branch(repo, run_id, {OPS: None, f"{OPS}/__init__.py": b"x = 1\n"})

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 0, result.stderr
    assert (repo / OPS / "__init__.py").read_bytes() == b"x = 1\n"


def test_deleting_a_tracked_file_under_an_ignored_folder_keeps_what_is_ignored_beside_it(
    repo: Path, run_id: str
):
    user_commits(repo, {".gitignore": "build/\n", "build/keep.txt": "tracked\n"})
    (repo / "build" / "cache.bin").write_bytes(b"the user's cache")
    # The run started after the user's commit, so its branch holds the file it deletes.
    git(repo, "update-ref", f"refs/heads/ssw/{run_id}", head(repo))
    commit_on_run_branch(repo, run_id, {"build/keep.txt": None})

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 0, result.stderr
    assert not (repo / "build" / "keep.txt").exists()
    assert (repo / "build" / "cache.bin").read_bytes() == b"the user's cache"


def test_a_correct_change_on_an_ordinary_python_repository_is_applied(repo: Path, run_id: str):
    user_commits(repo, {".gitignore": "__pycache__/\n*.py[cod]\n.venv/\n.env\n*.egg-info/\n"})
    (repo / ".env").write_text(SECRET)
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "lib" / "site.py").write_text("# the user's venv\n")
    (repo / "calc" / "__pycache__").mkdir(exist_ok=True)
    (repo / "calc" / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"\0")
    (repo / "calc.egg-info").mkdir()
    commit_on_run_branch(
        repo, run_id, {"tests/test_mean_of_one.py": b"def test_one():\n    pass\n"}
    )

    shown = ssw(repo, "runs", "show", run_id)
    result = ssw(repo, "runs", "apply", run_id)

    assert "apply: ok" in shown.stdout.splitlines()
    assert result.returncode == 0, result.stderr
    assert not result.stdout.startswith("--force")
    assert FIX_LINE in (repo / OPS).read_text()
    assert (repo / "tests" / "test_mean_of_one.py").is_file()
    assert (repo / ".env").read_text() == SECRET
    assert (repo / ".venv" / "lib" / "site.py").is_file()
    assert git(repo, "status", "--porcelain") == ""
