"""A run folder that is a symbolic link out of the runs folder is never followed (issue 22, item
9): the dashboard over real HTTP on 127.0.0.1 and `ssw runs` run as the user runs it skip it and
say so; what it points at is never read or shown."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from stepswitch.site.serve import start_dashboard
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import sample_repo

from .conftest import write_run
from .test_serve import get

SECRET_TASK = "a task from outside the runs folder"


def outside_run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "outside" / "r-out", run_id="r-out", task=SECRET_TASK)


def test_the_dashboard_does_not_follow_a_run_folder_linked_outside(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "r-in", run_id="r-in")
    target = outside_run(tmp_path)
    (runs / "r-link").symlink_to(target, target_is_directory=True)
    (runs / "r-file").mkdir()  # a folder of its own whose run.json is a link out
    (runs / "r-file" / "run.json").symlink_to(target / "run.json")

    server = start_dashboard(runs, tmp_path / "none.sqlite", "127.0.0.1", 0)
    try:
        status, html, _ = get(server, "/")
        linked, _, _ = get(server, "/replay/r-link")
        filed, _, _ = get(server, "/replay/r-file")
    finally:
        server.shutdown()
        server.server_close()

    assert status == 200 and "r-in" in html
    assert SECRET_TASK not in html and "r-out" not in html.split("<ul class='note skipped'>")[0]
    assert "r-link is a symbolic link" in html and "not followed" in html
    assert "r-file/run.json is a symbolic link out of its folder" in html
    assert (linked, filed) == (404, 404)


def test_ssw_runs_does_not_follow_a_run_folder_linked_outside(tmp_path: Path) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    target = outside_run(tmp_path)
    (repo / ".ssw" / "runs").mkdir(parents=True)
    (repo / ".ssw" / "runs" / "r-link").symlink_to(target, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("SSW_LEDGER", None)

    def ssw(*args: str) -> subprocess.CompletedProcess[str]:
        return run_ssw_cli(["runs", "--repo", str(repo), *args], env=env, timeout=60)

    listed = ssw("--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert (row["id"], row["record"], row["dollars"]) == ("r-link", None, None)
    assert row["problem"] == f".ssw/runs/r-link is a symbolic link (to {target}): not followed"
    table = ssw()
    assert "not followed" in table.stdout and "$" not in table.stdout
    cleaned = ssw("clean", "--all")
    assert cleaned.returncode == 0 and target.joinpath("run.json").is_file()
