"""Grading inside the sandbox: the agent's committed code runs with the hidden tests, and whatever
it tries (reading keys, writing outside the grading folder, forging the JUnit report) neither
reaches a canary nor moves the verdict."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stepswitch.bench.contestants import BuiltinContestant
from stepswitch.bench.executor import inline_executor
from stepswitch.bench.grading_folder import grade, parse_junit
from stepswitch.bench.runner import BenchSpec, run_bench
from stepswitch.bench.task import Task, load_suite, load_task
from stepswitch.errors import UsageError
from stepswitch.util.keys import looks_secret
from stepswitch.util.sandbox import Sandbox, choose_sandbox

from . import BUGGY, FIXED, write_task

CANARIES = {
    "OPENAI_API_KEY": "canary-grading-provider-6d1e",
    "ANTHROPIC_API_KEY": "canary-grading-anthropic-20ab",
    "MY_APP_SETTING": "canary-grading-custom-9f47",  # a harmless name: only the allow-list
}
HOME_CANARY = "canary-grading-home-5b3c"
CONFINING = ("bwrap", "unshare")
FORGED = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
    '<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1">'
    '<testcase classname=".ssw_hidden.test_hidden" name="test_add"/></testsuite></testsuites>'
)

# Runs at import of the graded module (collection of the hidden tests); findings go to a file in
# the grading folder, the one place it may write.
PROBE = """
import glob as _glob, json as _json, os as _os
_found = {"env": dict(_os.environ), "procs": [], "home": "", "writes": {}}
for _path in _glob.glob("/proc/[0-9]*/environ"):
    try:
        with open(_path, "rb") as _f:
            _found["procs"].append(_f.read().decode("utf-8", "replace"))
    except OSError as _exc:
        _found["procs"].append(f"{_path}: {_exc}")
try:
    with open(_os.path.join(USER_HOME, ".config", "token")) as _f:
        _found["home"] = _f.read()
except OSError as _exc:
    _found["home"] = str(_exc)
for _target in TARGETS + [_d + "/report.xml" for _d in _glob.glob(SCRATCH + "/run-*")]:
    try:
        with open(_target, "w") as _f:
            _f.write(FORGED)
        _found["writes"][_target] = "WROTE"
    except OSError as _exc:
        _found["writes"][_target] = str(_exc)
with open("probe.json", "w") as _f:
    _json.dump(_found, _f)
"""

# Writes a passing report wherever the grader could read one: the path pytest was given for its
# report, and the grader's scratch folders; at import (before pytest's own report) or at exit
# (after it).
FORGE = """
import atexit as _atexit, glob as _glob, sys as _sys

def _forge():
    targets = [a.split("=", 1)[1] for a in _sys.argv if a.startswith("--junitxml=")]
    targets += [_d + "/report.xml" for _d in _glob.glob(SCRATCH + "/run-*")]
    for _target in targets:
        try:
            with open(_target, "w") as _f:
                _f.write(FORGED)
        except OSError:
            pass
"""


def _backend(name: str) -> Sandbox:
    try:
        return choose_sandbox(name)
    except UsageError as exc:
        pytest.skip(str(exc))


def _tree(task: Task, root: Path, calc: str) -> Path:
    tree = root / "tree"
    shutil.copytree(task.repo, tree)
    (tree / "calc.py").write_text(calc)
    return tree


def _grade_from_a_process_holding_the_canaries(
    task: Task, tree: Path, scratch: Path, sandbox: str, user_home: Path
) -> dict[str, object]:
    """Grades as a bench worker would, from a process whose own initial environment holds the
    canaries (so a readable /proc/<ancestor>/environ would show them)."""
    script = textwrap.dedent(
        """
        import json, sys
        from pathlib import Path
        from stepswitch.bench.grading_folder import grade
        from stepswitch.bench.task import load_task
        from stepswitch.util.sandbox import choose_sandbox
        task = load_task(Path(sys.argv[1]))
        verdict = grade(task, Path(sys.argv[2]), Path(sys.argv[3]), choose_sandbox(sys.argv[4]))
        print(json.dumps({"passed": verdict.passed, "summary": verdict.summary(),
                          "sandbox": verdict.sandbox, "output": verdict.output}))
        """
    )
    env = {k: v for k, v in os.environ.items() if not looks_secret(k, v)} | CANARIES
    env["HOME"] = str(user_home)  # Path.home(): the home the policy hides
    done = subprocess.run(
        [sys.executable, "-c", script, str(task.folder), str(tree), str(scratch), sandbox],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    [probe] = scratch.glob("grading-*/repo/probe.json")
    result["probe"] = json.loads(probe.read_text())
    return result


@pytest.fixture
def probed(tmp_path: Path) -> dict[str, Path]:
    """A user home with a canary file, a folder outside everything with a file to overwrite."""
    user_home = tmp_path / "home"
    (user_home / ".config").mkdir(parents=True)
    (user_home / ".config" / "token").write_text(HOME_CANARY)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("untouched")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return {"root": tmp_path, "home": user_home, "outside": outside, "scratch": scratch}


def _probing_task(probed: dict[str, Path]) -> tuple[Task, Path]:
    root = probed["root"]
    task = load_task(write_task(root / "tasks"))
    targets = [
        str(probed["home"] / "planted"),
        str(probed["outside"] / "victim.txt"),
        str(probed["outside"] / "new.txt"),
        str(task.folder / "tests" / "test_hidden.py"),  # the hidden tests' source
    ]
    constants = (
        f"USER_HOME = {str(probed['home'])!r}\nTARGETS = {targets!r}\n"
        f"SCRATCH = {str(probed['scratch'])!r}\nFORGED = {FORGED!r}\n"
    )
    return task, _tree(task, root, FIXED + "\n" + constants + PROBE)


@pytest.mark.parametrize("name", CONFINING)
def test_graded_code_sees_no_canary_and_changes_nothing_outside_the_grading_folder(
    name: str, probed: dict[str, Path]
) -> None:
    _backend(name)
    task, tree = _probing_task(probed)
    hidden_source = (task.folder / "tests" / "test_hidden.py").read_text()
    result = _grade_from_a_process_holding_the_canaries(
        task, tree, probed["scratch"], name, probed["home"]
    )
    probe = result["probe"]
    assert isinstance(probe, dict)
    assert "PATH" in probe["env"]  # the probe really ran
    seen = json.dumps(probe) + str(result["output"])
    for value in [*CANARIES.values(), HOME_CANARY]:
        assert value not in seen
    assert probe["procs"]  # it could read its own namespace's /proc, and nothing of ssw's
    # Nothing of the host outside the grading folder changed, whatever the writes said inside.
    assert not (probed["home"] / "planted").exists()
    assert (probed["outside"] / "victim.txt").read_text() == "untouched"
    assert not (probed["outside"] / "new.txt").exists()
    assert (task.folder / "tests" / "test_hidden.py").read_text() == hidden_source
    for report in probed["scratch"].glob("run-*/report.xml"):
        assert "ssw_hidden.test_hidden" in report.read_text() and FORGED not in report.read_text()
    # The verdict is the honest one: the fix passes, from inside the sandbox.
    assert result["passed"] is True and result["summary"] == "1 passed"
    assert result["sandbox"] == name


def test_without_a_sandbox_the_same_probes_reach_the_canaries(probed: dict[str, Path]) -> None:
    """The control, and what `--sandbox none` means for grading: the environment is still
    scrubbed, but ssw's own /proc/<pid>/environ, the home and the host's files are reachable."""
    task, tree = _probing_task(probed)
    result = _grade_from_a_process_holding_the_canaries(
        task, tree, probed["scratch"], "none", probed["home"]
    )
    probe = result["probe"]
    assert isinstance(probe, dict)
    assert CANARIES["OPENAI_API_KEY"] not in json.dumps(probe["env"])  # the scrub still holds
    assert CANARIES["OPENAI_API_KEY"] in json.dumps(probe["procs"])
    assert probe["home"] == HOME_CANARY
    assert (probed["outside"] / "victim.txt").read_text() == FORGED
    assert result["sandbox"] == "none"
    # The forged report.xml files it wrote into the grader's scratch are not what is believed.
    assert result["passed"] is True and result["summary"] == "1 passed"


@pytest.mark.parametrize("name", ("none", *CONFINING))
@pytest.mark.parametrize("when", ("import", "exit"))
def test_a_report_forged_by_the_graded_code_does_not_pass(
    name: str, when: str, tmp_path: Path
) -> None:
    sandbox = _backend(name)
    task = load_task(write_task(tmp_path / "tasks"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    call = "_forge()" if when == "import" else "_atexit.register(_forge)"
    constants = f"SCRATCH = {str(scratch)!r}\nFORGED = {FORGED!r}\n"
    tree = _tree(task, tmp_path, BUGGY + "\n" + constants + FORGE + call + "\n")
    verdict = grade(task, tree, scratch, sandbox)
    assert not verdict.passed
    assert verdict.failed and verdict.report  # graded as failing, not a harness error
    assert verdict.tampered is not None and "not one XML document" in verdict.tampered
    assert verdict.summary().startswith("report tampered with: ")
    assert verdict.sandbox == name


def test_ending_the_runner_with_status_0_before_it_reports_is_no_pass(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path / "tasks"))
    tree = _tree(task, tmp_path, BUGGY + "\nimport os\nos._exit(0)\n")
    (tmp_path / "scratch").mkdir()
    verdict = grade(task, tree, tmp_path / "scratch")
    assert verdict.exit_status == 0 and not verdict.report and not verdict.passed


def test_a_report_that_disagrees_with_the_exit_status_is_tampered_with() -> None:
    failing = FORGED.replace('failures="0"', 'failures="1"')
    assert parse_junit(FORGED.encode(), 0, 0.1, "").passed
    assert parse_junit(FORGED.encode(), 1, 0.1, "").failed is False  # exit 1: simply no pass
    assert not parse_junit(FORGED.encode(), 1, 0.1, "").passed
    lying = parse_junit(failing.encode(), 0, 0.1, "")
    assert not lying.passed and lying.tampered == "pytest exited 0 but the report lists failures"
    bare = parse_junit(b'<testsuite tests="1" failures="0"/>', 0, 0.1, "")
    assert not bare.passed and bare.tampered and "shape" in bare.tampered
    assert parse_junit(b"", 0, 0.1, "").report is False  # nothing written: no report at all


@pytest.mark.slow
@pytest.mark.parametrize("name", ("bwrap", "none"))
def test_a_bench_grades_inside_the_sandbox_its_agent_ran_in(name: str, tmp_path: Path) -> None:
    """End to end: the hidden test passes only where the grader's host file is out of reach."""
    _backend(name)
    host_file = tmp_path / "host-only.txt"
    host_file.write_text("the grader's machine")
    hidden = f"""
        import os

        from calc import add


        def test_add_from_inside_a_sandbox():
            assert add(2, 3) == 5
            assert not os.path.exists({str(host_file)!r})
    """
    write_task(tmp_path, "t1", {"tests/test_hidden.py": hidden})
    spec = BenchSpec(
        root=tmp_path / "runs" / "b1",
        tasks=load_suite(tmp_path / "suite"),
        contestants=[BuiltinContestant("oracle")],
        sandbox=name,
    )
    result = run_bench(spec, executor=inline_executor, resamples=50)
    [row] = result.rows
    grade_json = json.loads((result.root / row.folder / "grade.json").read_text())
    record = json.loads((result.root / "run.json").read_text())
    assert grade_json["sandbox"] == name and record["sandbox"] == name
    if name == "none":
        assert not row.passed and row.verdict == "1 failed"
    else:
        assert row.passed, row.reason
