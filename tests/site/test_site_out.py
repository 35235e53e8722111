"""Where `ssw site build` writes by default: under .ssw/, so the checkout stays clean for a run."""

from __future__ import annotations

import subprocess
from pathlib import Path

from stepswitch.agent.workspace.worktree import check_clean
from tests.test_one_line_errors import RUNS, ssw


def test_site_build_writes_under_dot_ssw_and_leaves_the_checkout_clean_for_a_run(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("a checkout\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    result = ssw("site", "build", RUNS, cwd=repo)

    assert result.returncode == 0, result.stderr
    assert (repo / ".ssw" / "site" / "index.html").is_file()
    assert not (repo / "site").exists()
    assert check_clean(repo) == []  # what `ssw run` checks before it starts


def test_site_build_with_no_folder_named_replays_the_repositorys_own_runs(tmp_path: Path):
    """Issue 43: in a user's repository (no bench/runs, no docs/runs) `ssw site build` failed
    asking for run folders; it now takes the repository's .ssw/runs."""
    import shutil

    repo = tmp_path / "repo"
    runs = repo / ".ssw" / "runs"
    runs.mkdir(parents=True)
    for run in sorted(p for p in RUNS.iterdir() if p.is_dir()):
        shutil.copytree(run, runs / run.name)
    result = ssw("site", "build", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"page: {Path('.ssw/site/index.html')} (2 run folder(s), ")
    assert (repo / ".ssw" / "site" / "index.html").is_file()
