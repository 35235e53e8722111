from __future__ import annotations

import typer
from typer.testing import CliRunner

from stepswitch.bench.task import load_task
from stepswitch.bench.validate import validate_task
from stepswitch.cli.bench import bench_app
from stepswitch.errors import ConfigError
from tests.bench import BUGGY, FIXED, TASK_TOML, patch_of, write_task


def problem_of(folder) -> str:
    result = validate_task(load_task(folder))
    assert result.problem is not None
    return result.problem


def test_start_that_fails_and_reference_that_passes_twice_is_valid(tmp_path):
    result = validate_task(load_task(write_task(tmp_path)))
    assert result.valid, result.problem
    assert result.start is not None and result.start.failures == 1
    assert [r.summary() for r in result.reference] == ["1 passed", "1 passed"]
    assert result.warnings == ()  # timeout_s = 60 covers its 1 test x 5 s, and the data


def test_start_that_passes_its_hidden_tests_is_invalid(tmp_path):
    hidden = "from calc import double\n\ndef test_double():\n    assert double(3) == 6\n"
    problem = problem_of(write_task(tmp_path, files={"tests/test_hidden.py": hidden}))
    assert "untouched start passes" in problem


def test_reference_that_fails_is_invalid(tmp_path):
    wrong = patch_of("calc.py", BUGGY, BUGGY.replace("a - b", "a * b"))
    problem = problem_of(write_task(tmp_path, files={"solution/solution.patch": wrong}))
    assert "reference fails the hidden tests" in problem
    assert "test_add" in problem


def test_flaky_reference_is_invalid(tmp_path):
    counter = tmp_path / "runs"
    hidden = f"""
        from pathlib import Path

        from calc import add

        COUNTER = Path({str(counter)!r})


        def test_add():
            assert add(2, 3) == 5


        def test_third_run_fails():
            runs = int(COUNTER.read_text()) + 1 if COUNTER.exists() else 1
            COUNTER.write_text(str(runs))
            assert runs != 3  # start, reference, then the reference again
    """
    problem = problem_of(write_task(tmp_path, files={"tests/test_hidden.py": hidden}))
    assert "flaky" in problem
    assert "test_third_run_fails" in problem


def test_test_past_the_per_test_limit_is_timed_out(tmp_path):
    hidden = "def test_spins():\n    while True:\n        pass\n"
    toml = TASK_TOML.format(name="task").replace(
        "per_test_timeout_s = 5", "per_test_timeout_s = 0.5"
    )
    problem = problem_of(
        write_task(tmp_path, files={"tests/test_hidden.py": hidden, "task.toml": toml})
    )
    # A spinning test meets the CPU limit first, unless the machine is so loaded that it gets
    # under a quarter of a CPU: then the wall backstop. Either way it is timed out, by name.
    assert (
        "timed out after 0.5 s of CPU time" in problem
        or "timed out after 2 s of wall time" in problem
    )
    assert "test_spins" in problem


def test_the_per_test_limit_is_cpu_time_and_a_waiting_test_meets_the_wall_backstop(tmp_path):
    """Waiting past the CPU limit (as a loaded machine makes a test wait) is no time-out; a test
    that waits past the backstop, four times the limit, is."""
    toml = TASK_TOML.format(name="task").replace(
        "per_test_timeout_s = 5", "per_test_timeout_s = 0.5"
    )
    waits = "import time\nfrom calc import add\n\n\ndef test_add():\n    time.sleep({})\n"
    waits += "    assert add(2, 3) == 5\n"
    files = {"task.toml": toml, "tests/test_hidden.py": waits.format(0.7)}
    assert validate_task(load_task(write_task(tmp_path / "a", files=files))).valid
    files["tests/test_hidden.py"] = waits.format(30)
    problem = problem_of(write_task(tmp_path / "b", files=files))
    assert "timed out after 2 s of wall time" in problem


def test_run_past_the_whole_run_limit_is_killed(tmp_path):
    hidden = "import time\n\ndef test_waits():\n    while True:\n        time.sleep(0.05)\n"
    toml = TASK_TOML.format(name="task").replace("timeout_s = 60", "timeout_s = 1")
    problem = problem_of(
        write_task(tmp_path, files={"tests/test_hidden.py": hidden, "task.toml": toml})
    )
    assert "timed out" in problem
    assert "1 s limit" in problem


def test_hidden_file_without_tests_is_invalid(tmp_path):
    problem = problem_of(write_task(tmp_path, files={"tests/test_hidden.py": "X = 1\n"}))
    assert "did not run" in problem
    assert "no JUnit report (exit 5)" in problem or "no tests" in problem


def test_command_that_passes_without_the_hidden_tests_is_invalid(tmp_path):
    toml = TASK_TOML.format(name="task").replace(".ssw_hidden", "tests .ssw_hidden")
    problem = problem_of(write_task(tmp_path, files={"task.toml": toml}))
    assert "passes without the hidden tests" in problem


def test_patch_that_does_not_apply_is_invalid(tmp_path):
    stale = patch_of("calc.py", BUGGY.replace("double", "twice"), FIXED.replace("double", "twice"))
    problem = problem_of(write_task(tmp_path, files={"solution/solution.patch": stale}))
    assert "solution/solution.patch does not apply" in problem


def test_reference_that_breaks_visible_tests_is_invalid(tmp_path):
    breaking = patch_of("calc.py", BUGGY, FIXED.replace("2 * x", "3 * x"))
    problem = problem_of(write_task(tmp_path, files={"solution/solution.patch": breaking}))
    assert "reference fails its own visible tests" in problem


def test_reference_that_fails_a_golden_gate_is_invalid(tmp_path):
    pyproject = """
        [tool.pytest.ini_options]
        testpaths = ["tests"]

        [tool.stepswitch.gates.golden]
        kind = "golden"
        expected = "golden.json"
        command = "python -c 'import calc; print(calc.add(2, 3))'"
    """
    files = {"repo/pyproject.toml": pyproject, "repo/golden.json": "6\n"}
    assert "fails its gate golden" in problem_of(write_task(tmp_path, files=files))


def cli(*args: str):
    app = typer.Typer()
    app.add_typer(bench_app, name="bench")
    return CliRunner().invoke(app, ["bench", *args])


def test_cli_raises_a_config_error_for_a_malformed_task(tmp_path):
    folder = write_task(tmp_path, files={"task.toml": TASK_TOML.format(name="task") + "x = 1\n"})
    result = cli("validate", str(folder))
    assert isinstance(result.exception, ConfigError)
    assert result.exception.exit_code == 2
    assert result.exception.key == "tests.x"


def test_cli_prints_a_line_per_task_exits_1_when_one_is_invalid_and_out_records_each_tasks_checks(
    tmp_path,
):
    """One validation of two tasks: the lines the user reads, and with --out, the record of each
    task's checks and verdict with the commit, version and start."""
    import json
    from datetime import datetime

    from stepswitch import __version__
    from stepswitch.bench.validate import CHECKS

    write_task(tmp_path, "good")
    wrong = patch_of("calc.py", BUGGY, BUGGY.replace("a - b", "a * b"))
    write_task(tmp_path, "bad", files={"solution/solution.patch": wrong})
    out = tmp_path / "validation.json"
    result = cli("validate", str(tmp_path / "suite"), "--jobs", "2", "--out", str(out))
    lines = result.output.splitlines()
    assert lines[0].startswith("INVALID  suite/bad: the reference fails")
    assert lines[1] == "valid    suite/good  (start: 1 failed; reference: 1 passed x2)"
    assert lines[2].startswith("2 tasks: 1 valid, 1 invalid")
    assert result.exit_code == 1
    assert f"wrote {out}" in result.output
    record = json.loads(out.read_text())
    assert (record["kind"], record["tool"]["version"]) == ("ssw bench validate", __version__)
    assert datetime.fromisoformat(record["started_at"]).tzinfo is not None
    assert "commit" in record and "dirty" in record
    assert record["totals"] == {"tasks": 2, "valid": 1, "invalid": 1}
    bad, good = record["tasks"]
    assert (good["task"], good["valid"], good["problem"], good["not_run"]) == (
        "suite/good",
        True,
        None,
        [],
    )
    assert [c["check"] for c in good["checks"]] == list(CHECKS)
    assert all(c["ok"] for c in good["checks"]) and len(good["sha256"]) == 64
    assert (bad["valid"], bad["checks"][-1]["check"], bad["checks"][-1]["ok"]) == (
        False,
        "reference_hidden_1",
        False,
    )
    assert bad["not_run"] == list(CHECKS)[4:]
    assert bad["problem"].startswith("the reference fails the hidden tests")


def test_cli_json_prints_the_record_on_stdout_and_the_lines_elsewhere(tmp_path):
    import json

    write_task(tmp_path, "good")
    result = cli("validate", str(tmp_path / "suite"), "--json")
    assert result.exit_code == 0
    record = json.loads(result.stdout)
    assert record["totals"] == {"tasks": 1, "valid": 1, "invalid": 0}
    assert "valid    suite/good" in result.stderr


def test_a_task_that_passes_only_unconfined_is_invalid_in_the_grading_sandbox(tmp_path):
    """Validation runs its tests where grading will: a reference that needs to write outside
    its folder validates unconfined, then would fail every graded run."""
    import shutil

    import pytest

    from stepswitch.util.sandbox import choose_sandbox

    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed")
    outside = tmp_path / "outside.txt"
    hidden = (
        "from calc import add\n\n\ndef test_add():\n"
        f"    open({str(outside)!r}, 'w').write('x')\n"
        "    assert add(2, 3) == 5\n"
    )
    folder = write_task(tmp_path, files={"tests/test_hidden.py": hidden})
    assert validate_task(load_task(folder)).valid  # unconfined: the write works
    confined = validate_task(load_task(folder), choose_sandbox("bwrap"))
    assert not confined.valid and "reference fails the hidden tests" in str(confined.problem)
    result = CliRunner().invoke(bench_app, ["validate", str(folder.parent)])
    assert result.exit_code == 1 and "reference fails the hidden tests" in result.output


def test_a_whole_run_limit_below_tests_times_their_wall_backstop_is_a_warning(tmp_path):
    """The per-test limit is CPU time; a hanging start's tests each run to the wall backstop,
    four times it. Before, the warning compared with the CPU limit and said nothing here."""
    short = TASK_TOML.replace("per_test_timeout_s = 5", "per_test_timeout_s = 20")
    files = {"task.toml": short.format(name="task")}
    result = validate_task(load_task(write_task(tmp_path / "short", files=files)))
    assert result.valid, result.problem
    assert result.warnings == (
        "1 passed; warning: timeout_s = 60 is less than 1 test x per_test_timeout_s = 20 x 4 "
        "(a test's wall-clock backstop) = 80 s: a start whose tests hang, or a loaded machine, "
        "can end the run before the tests' own limits do; raise it to 80",
    )


def test_a_start_that_hangs_is_valid_only_when_the_task_declares_it(tmp_path):
    hangs = BUGGY.replace("return a - b", "while True:\n        pass")
    toml = TASK_TOML.format(name="task").replace(
        "per_test_timeout_s = 5", "per_test_timeout_s = 0.5"
    )
    files = {"task.toml": toml, "repo/calc.py": hangs,
             "solution/solution.patch": patch_of("calc.py", hangs, FIXED)}  # fmt: skip
    problem = problem_of(write_task(tmp_path / "undeclared", files=files))
    assert "start: timed out" in problem and "declare start_hangs = true" in problem
    files["task.toml"] = toml + "start_hangs = true\n"
    declared = validate_task(load_task(write_task(tmp_path / "declared", files=files)))
    assert declared.valid, declared.problem
    assert declared.checks[0].found.startswith("start: timed out, as start_hangs declares")
