"""`ssw bench export --format harbor` and `ssw bench import harbor`: the layout Harbor documents,
its scripts run for real in a container-shaped bwrap sandbox (/app, /tests, /solution, /logs),
Harbor's own loader and lint where a Harbor venv is at hand, and the round trip back to tasks
that `ssw bench validate` accepts with the same verdicts."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from stepswitch.bench.harbor import export_suite, export_task, import_harbor
from stepswitch.bench.oracle import reference_change
from stepswitch.bench.task import load_suite
from stepswitch.bench.validate import validate_tasks
from tests.harness.cli import run_ssw_cli

REPO = Path(__file__).resolve().parents[2]
GENERAL = REPO / "bench/suites/general"
TASKS = ("paginate-last-page", "csv-quoting", "interval-merge")
# Harbor needs Python 3.12: .ci/run makes this venv when it can (HARBOR_PYTHON overrides).
HARBOR_PYTHON = Path(os.environ.get("HARBOR_PYTHON", REPO / ".venv-harbor/bin/python"))


def one(name: str):
    (task,) = load_suite(GENERAL / name)
    return task


def container(task: Path, tmp: Path, *scripts: str) -> subprocess.CompletedProcess[str]:
    """Run the task's scripts as Harbor would in its container, here in bwrap: a copy of
    environment/repo at /app, tests/ at /tests, solution/ at /solution, /logs writable."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed")
    app, logs = tmp / "app", tmp / "logs"
    shutil.copytree(task / "environment/repo", app)
    logs.mkdir()
    python = Path(sys.executable).parent  # pytest, as the image's pip install gives it
    args = ["bwrap", "--die-with-parent", "--unshare-all", "--dev", "/dev", "--proc", "/proc"]
    args += ["--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if Path("/" + link).is_symlink():
            args += ["--symlink", os.readlink("/" + link), "/" + link]
    for real in {Path(sys.base_prefix).resolve(), Path(sys.prefix)}:
        args += ["--ro-bind", str(real), str(real)]
    args += ["--bind", str(app), "/app", "--ro-bind", str(task / "tests"), "/tests"]
    args += ["--ro-bind", str(task / "solution"), "/solution", "--bind", str(logs), "/logs"]
    args += ["--chdir", "/app", "--setenv", "PATH", f"{python}:/usr/bin:/bin"]
    script = " && ".join(f"bash {s}" for s in scripts)
    return subprocess.run([*args, "bash", "-c", script], capture_output=True, text=True)


def reward(tmp: Path) -> str:
    return (tmp / "logs/verifier/reward.txt").read_text().strip()


def test_an_exported_task_has_the_layout_and_fields_harbor_documents(tmp_path: Path) -> None:
    folder = export_task(one("paginate-last-page"), tmp_path)
    config = tomllib.loads((folder / "task.toml").read_text())
    assert config["schema_version"] == "1.4"
    assert config["task"]["name"] == "stepswitch/general-paginate-last-page"
    assert config["verifier"]["environment_mode"] == "separate"  # graded out of the agent's box
    assert config["artifacts"] == ["/app"]
    assert config["metadata"]["ssw"]["tests_command"].endswith(".ssw_hidden")
    assert (folder / "instruction.md").read_text() == one("paginate-last-page").instruction
    dockerfile = (folder / "environment/Dockerfile").read_text()
    assert dockerfile.startswith("FROM python:") and "pytest==" in dockerfile
    assert "tests" not in dockerfile.replace("pytest", "")  # no hidden test in the agent's image
    for script in ("tests/test.sh", "solution/solve.sh"):
        assert (folder / script).stat().st_mode & stat.S_IXUSR
    assert "/logs/verifier/reward.txt" in (folder / "tests/test.sh").read_text()
    assert (folder / "tests/hidden/test_pages.py").is_file()
    assert (folder / "solution/files/listing/paginate.py").is_file()


@pytest.mark.slow
def test_the_exported_scripts_reward_the_reference_and_not_the_start(tmp_path: Path) -> None:
    folder = export_task(one("paginate-last-page"), tmp_path / "out")
    solved = container(folder, tmp_path / "solved", "/solution/solve.sh", "/tests/test.sh")
    assert solved.returncode == 0, solved.stderr
    assert reward(tmp_path / "solved") == "1"
    start = container(folder, tmp_path / "start", "/tests/test.sh")
    assert start.returncode == 0, start.stderr
    assert reward(tmp_path / "start") == "0"


@pytest.mark.slow
def test_a_changed_visible_test_is_put_back_before_the_hidden_tests_run(tmp_path: Path) -> None:
    """As ssw's grading does: an agent that rewrites the repo's tests gains nothing."""
    folder = export_task(one("paginate-last-page"), tmp_path / "out")
    cheat = tmp_path / "cheat.sh"
    cheat.write_text("echo 'def test_x(): pass' > /app/tests/test_listing.py\n")
    shutil.copy(cheat, folder / "solution/cheat.sh")
    done = container(folder, tmp_path / "c", "/solution/cheat.sh", "/tests/test.sh")
    assert done.returncode == 0, done.stderr
    assert "def test_x" not in (tmp_path / "c/app/tests/test_listing.py").read_text()
    assert reward(tmp_path / "c") == "0"


@pytest.mark.slow
def test_export_then_import_gives_tasks_validate_accepts_with_the_same_verdicts(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    for name in TASKS:
        shutil.copytree(GENERAL / name, suite / name)
    export_suite(suite, tmp_path / "harbor")
    found = import_harbor(tmp_path / "harbor", tmp_path / "back")
    assert [(t.name, t.why) for t in found] == [(n, "") for n in sorted(TASKS)]
    for before, after in zip(load_suite(suite), load_suite(tmp_path / "back"), strict=True):
        assert (before.spec, before.instruction) == (after.spec, after.instruction)
        changes = [
            reference_change(t, t.repo, tmp_path / f"ref-{n}-{t.spec.id}")
            for n, t in enumerate((before, after))
        ]
        assert changes[0] == changes[1] and changes[0].writes  # the same reference change
    # Every committed task validates (.ci/run's `ssw bench validate` step): the same verdicts
    # after the round trip are every imported task valid.
    back = load_suite(tmp_path / "back")
    again = {v.task.split("/")[-1]: v.valid for v in validate_tasks(back, jobs=2)}
    assert again == dict.fromkeys(TASKS, True)


def test_a_harbor_task_on_another_image_is_refused_with_its_reason(tmp_path: Path) -> None:
    export_suite(GENERAL / "csv-quoting", tmp_path / "harbor")
    folder = tmp_path / "harbor/csv-quoting"
    shutil.copytree(folder, tmp_path / "harbor/other")
    (folder / "environment/Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    (tmp_path / "harbor/other/solution/solve.sh").write_text("#!/bin/bash\ncurl -s x | sh\n")
    found = {t.name: t.why for t in import_harbor(tmp_path / "harbor", tmp_path / "back")}
    assert "not a plain Python image" in found["csv-quoting"]
    assert found["other"] == "solution/solve.sh does more than copy files: 'curl -s x | sh'"
    assert not (tmp_path / "back/csv-quoting").exists()


def test_export_refuses_a_folder_that_already_holds_the_tasks(tmp_path: Path) -> None:
    from stepswitch.errors import UsageError

    export_suite(GENERAL / "csv-quoting", tmp_path)
    with pytest.raises(UsageError, match="already holds csv-quoting"):
        export_suite(GENERAL / "csv-quoting", tmp_path)


@pytest.mark.skipif(not HARBOR_PYTHON.exists(), reason="no Harbor venv (Python 3.12)")
def test_harbor_loads_and_lints_every_exported_task(tmp_path: Path) -> None:
    for name in ("general", "science"):
        export_suite(REPO / "bench/suites" / name, tmp_path / name)
    folders = sorted(str(p) for p in tmp_path.glob("*/*"))
    load = "import sys\nfrom harbor.models.task.task import Task\n"
    load += "print(len([Task(p) for p in sys.argv[1:]]))"
    loaded = subprocess.run(
        [str(HARBOR_PYTHON), "-c", load, *folders], capture_output=True, text=True
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == str(len(folders))
    harbor = HARBOR_PYTHON.parent / "harbor"
    lint = subprocess.run([str(harbor), "lint", "--json", *folders], capture_output=True, text=True)
    assert (lint.returncode, lint.stdout.strip()) == (0, "[]"), lint.stderr


def test_export_and_import_mistakes_are_one_line_and_exit_2(tmp_path: Path) -> None:
    def ssw(*args: str) -> subprocess.CompletedProcess[str]:
        return run_ssw_cli(["bench", *args], cwd=tmp_path)

    cases = {
        ("export", str(GENERAL), "out", "--format", "zip"): "--format 'zip': ssw bench export "
        "knows harbor",
        ("import", "harbor"): "name the folder of Harbor task folders",
        ("import", "harbor", "nowhere", "--out", "x"): "nowhere: no such folder of Harbor tasks",
        ("import", "humaneval", "somewhere"): "takes no folder; use --data FILE",
    }
    for args, message in cases.items():
        done = ssw(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    done = ssw("export", str(GENERAL / "csv-quoting"), "out", "--format", "harbor")
    assert done.returncode == 0 and "1 tasks written in Harbor's layout" in done.stdout
    done = ssw("import", "harbor", "out", "--out", "back")
    assert done.returncode == 0 and "1 of 1 tasks written" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "marked",
    ["@pytest.mark.skip(reason='later')", "@pytest.mark.xfail(reason='known')"],
)
def test_a_skipped_or_xfailed_hidden_test_fails_the_export_as_it_fails_ssw(
    tmp_path: Path, marked: str
) -> None:
    """As Exercism's alphametics: one hidden test skipped. ssw fails the reference; the
    exported test.sh must give reward 0 too. Control: before issue 46 it gave reward 1."""
    task = tmp_path / "suite/paginate-last-page"
    shutil.copytree(GENERAL / "paginate-last-page", task)
    later = f"import pytest\n\n\n{marked}\ndef test_later():\n    assert False\n"
    (task / "tests/test_later.py").write_text(later)
    [verdict] = validate_tasks(load_suite(task))
    assert not verdict.valid and "skipped" in str(verdict.problem), verdict.problem
    folder = export_task(load_suite(task)[0], tmp_path / "out")
    solved = container(folder, tmp_path / "solved", "/solution/solve.sh", "/tests/test.sh")
    assert solved.returncode == 0, solved.stderr
    assert reward(tmp_path / "solved") == "0"
    assert 'skipped="1"' in (tmp_path / "solved/logs/verifier/junit.xml").read_text()


def test_an_export_with_a_task_it_cannot_write_leaves_no_folder(tmp_path: Path) -> None:
    """The second of three tasks has a reference that does not apply. Control: before issue 46
    the export stopped there and left `out` holding the first task."""
    suite = tmp_path / "suite"
    for name in TASKS:
        shutil.copytree(GENERAL / name, suite / name)
    (suite / "interval-merge/solution/solution.patch").write_text(
        "diff --git a/nowhere.py b/nowhere.py\n--- a/nowhere.py\n+++ b/nowhere.py\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    done = run_ssw_cli(["bench", "export", "suite", "out", "--format", "harbor"], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "interval-merge cannot be exported" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]  # no out, no half folder
