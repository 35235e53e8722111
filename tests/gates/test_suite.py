from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from stepswitch.cli.gates import gates_command
from stepswitch.gates.config import (
    CommandGate,
    GateConfig,
    GateSpec,
    GoldenGate,
    ProtectedGate,
    TestsGate,
)
from stepswitch.gates.report import focused_report, gate_report
from stepswitch.gates.runner import GateResult
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from tests.harness.repo import write_repo

PY = shlex.quote(sys.executable)

CALC = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "calc/helpers.py": "from calc.ops import add\n\ndef twice(x):\n    return add(x, x)\n",
    "calc/text.py": "def shout(s):\n    return s.upper()\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/test_helpers.py": (
        "from calc.helpers import twice\n\ndef test_twice():\n    assert twice(2) == 4\n"
    ),
    # Fails whatever the change: it shows which stage ran it.
    "tests/test_text.py": (
        "from calc.text import shout\n\ndef test_shout():\n    assert shout('a') == 'a!'\n"
    ),
}


PASSING = "def test_fine():\n    pass\n"


def _suite(root: Path, *gates: GateSpec, log_dir: Path | None = None) -> GateSuite:
    return GateSuite(GateConfig(tuple(gates), "test"), root, dict(os.environ), log_dir)


def _tests_gate(root: Path) -> TestsGate:
    return TestsGate(name="tests", kind="tests", command=pytest_command(root), timeout_s=120.0)


def test_a_changed_module_runs_its_importing_tests_first_then_the_full_suite(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, CALC)
    result = _suite(tmp_path, _tests_gate(tmp_path)).run(["calc/ops.py"])
    assert result.impacted == ("tests/test_helpers.py", "tests/test_ops.py")
    assert result.stages == ("tests:impacted", "tests:full")
    impacted, full = result.results
    assert impacted.passed  # the failing test_text.py was not among the impacted tests
    assert not full.passed and "tests/test_text.py::test_shout" in full.report
    assert result.full_ran
    assert result.impacted_s is not None and result.full_s is not None
    assert result.first_verdict_s is not None
    # The first verdict came at the end of the impacted stage, before the full suite ran (an
    # order of events, not a race between durations: the pre-checks count in both).
    assert result.first_verdict_s + result.full_s <= result.total_s


def test_failing_impacted_tests_stop_before_the_full_suite(tmp_path: Path) -> None:
    write_repo(tmp_path, CALC)
    result = _suite(tmp_path, _tests_gate(tmp_path)).run(["calc/text.py"])
    assert result.stages == ("tests:impacted",)
    assert not result.full_ran and result.full_s is None
    report = result.results[0].report
    assert report.startswith("tests:impacted: failed (exit 1)")
    assert "FAILED tests/test_text.py::test_shout" in report
    assert "E       AssertionError: assert 'A' == 'a!'" in report


def test_impacted_test_files_that_hold_no_test_do_not_fail_the_stage(tmp_path: Path) -> None:
    write_repo(tmp_path, {"tests/test_later.py": "# tests to come\n", "tests/test_a.py": PASSING})
    command = f"{PY} -m pytest -q -p no:cacheprovider {{tests}}"
    gate = TestsGate(name="tests", kind="tests", command=command)
    result = _suite(tmp_path, gate).run(["tests/test_later.py"])
    assert result.impacted == ("tests/test_later.py",)
    assert result.stages == ("tests:impacted", "tests:full")
    assert result.passed, result.report


def test_a_change_that_impacts_no_test_goes_straight_to_the_full_suite(tmp_path: Path) -> None:
    write_repo(tmp_path, {**CALC, "tests/test_text.py": "def test_fine():\n    pass\n"})
    result = _suite(tmp_path, _tests_gate(tmp_path)).run(["README.md"])
    assert result.stages == ("tests:full",)
    assert result.passed and result.impacted == () and result.impacted_s is None
    assert result.first_verdict_s is not None


def test_cheap_gates_run_first_and_the_first_failure_stops_the_rest(tmp_path: Path) -> None:
    write_repo(tmp_path, CALC)
    result = _suite(
        tmp_path,
        CommandGate(name="format", command="true"),
        CommandGate(name="lint", command="echo 'calc/ops.py:1:1: F401 unused'; exit 1"),
        _tests_gate(tmp_path),
    ).run(["calc/ops.py"])
    assert result.stages == ("format", "lint")
    assert result.not_run == ("tests",)
    assert result.failed is not None and result.failed.name == "lint"
    assert "calc/ops.py:1:1: F401 unused" in result.report


def test_a_gate_whose_globs_match_no_changed_file_is_skipped(tmp_path: Path) -> None:
    result = _suite(tmp_path, CommandGate(name="lint", command="false", globs=("*.py",))).run(
        ["README.md"]
    )
    assert result.results == () and result.skipped == ("lint",) and result.passed


def test_a_missing_command_is_a_failing_gate_saying_command_not_found(tmp_path: Path) -> None:
    result = _suite(tmp_path, CommandGate(name="lint", command="no-such-tool-ssw --check")).run(
        None
    )
    assert not result.passed
    assert "command not found: no-such-tool-ssw" in result.report


def test_a_missing_golden_command_names_the_missing_word_not_the_wrapper(tmp_path: Path) -> None:
    write_repo(tmp_path, {"golden/values.json": '{"e": 1.0}'})
    gate = _golden(tmp_path, {}).model_copy(update={"command": "no-such-model-ssw --run"})
    result = _suite(tmp_path, gate).run(None)
    assert "command not found: no-such-model-ssw" in result.report


def test_a_gate_past_its_timeout_is_killed_and_fails_saying_timed_out(tmp_path: Path) -> None:
    result = _suite(tmp_path, CommandGate(name="slow", command="sleep 30", timeout_s=0.2)).run(None)
    assert not result.passed
    assert "slow: timed out after 0.2 s" in result.report
    assert result.total_s < 10


def _golden(tmp_path: Path, values: object, **extra: object) -> GoldenGate:
    script = f"import json, sys; print('noise', file=sys.stderr); print(json.dumps({values!r}))"
    return GoldenGate.model_validate(
        {
            "name": "golden",
            "kind": "golden",
            "expected": "golden/values.json",
            "command": f"{PY} -c {shlex.quote(script)}",
            "rtol": 1e-6,
            "atol": 0.0,
            **extra,
        }
    )


def test_golden_values_within_tolerance_pass(tmp_path: Path) -> None:
    write_repo(tmp_path, {"golden/values.json": json.dumps({"e": [1.0, 2.0], "n": 3})})
    gate = _golden(tmp_path, {"e": [1.0, 2.0000000001], "n": 3})
    result = _suite(tmp_path, gate).run(None)
    assert result.passed, result.report
    assert "3 numbers within rtol=1e-06 atol=0" in result.results[0].report


def test_golden_values_outside_tolerance_fail_naming_the_worst_offender(tmp_path: Path) -> None:
    write_repo(tmp_path, {"golden/values.json": json.dumps({"e": [1.0, 2.0], "n": 3})})
    result = _suite(tmp_path, _golden(tmp_path, {"e": [1.1, 2.5], "n": 3})).run(None)
    assert not result.passed
    assert "worst: e[1]: expected 2.0, actual 2.5 (abs error 0.5, rel error 0.25)" in result.report


def test_golden_values_can_come_from_a_file_the_command_writes(tmp_path: Path) -> None:
    write_repo(tmp_path, {"golden/values.csv": "x,y\n1,2\n"})
    gate = GoldenGate(
        name="golden",
        kind="golden",
        expected="golden/values.csv",
        command="mkdir -p out && printf 'x,y\\n1,2.5\\n' > out/values.csv",
        actual="out/values.csv",
    )
    result = _suite(tmp_path, gate).run(None)
    assert not result.passed
    assert "worst: [0].y: expected 2.0, actual 2.5" in result.report


def test_a_malformed_golden_file_is_a_failing_gate_with_the_reason(tmp_path: Path) -> None:
    write_repo(tmp_path, {"golden/values.json": "{oops"})
    result = _suite(tmp_path, _golden(tmp_path, {"e": 1.0})).run(None)
    assert not result.passed
    assert "the golden file golden/values.json is malformed: not valid JSON" in result.report


def test_a_missing_golden_file_is_a_failing_gate_saying_so(tmp_path: Path) -> None:
    result = _suite(tmp_path, _golden(tmp_path, {"e": 1.0})).run(None)
    assert "the golden file golden/values.json does not exist" in result.report


def test_a_changed_protected_constant_fails_naming_it(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {"model/constants.py": "G = 6.674e-11\nC = 3e8\n", "data/ref.csv": "a\n1\n"},
        commit=True,
    )
    (tmp_path / "model/constants.py").write_text("G = 6.7e-11\nC = 3e8\n", encoding="utf-8")
    gate = ProtectedGate(
        name="constants",
        kind="protected",
        paths=("data",),
        constants={"model/constants.py": ("G", "C")},
    )
    result = _suite(tmp_path, gate).run(["model/constants.py"], "HEAD")
    assert not result.passed
    assert "model/constants.py: protected constant G changed: 6.674e-11 -> 6.7e-11" in result.report
    assert "protected constant C" not in result.report


def test_a_change_to_a_protected_path_fails_even_when_not_listed_as_changed(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, {"data/ref.csv": "a\n1\n"}, commit=True)
    (tmp_path / "data/ref.csv").write_text("a\n2\n", encoding="utf-8")
    gate = ProtectedGate(name="constants", kind="protected", paths=("data",))
    suite = _suite(tmp_path, gate)
    assert (
        "data/ref.csv: modified, but it is protected by 'data'" in suite.check(gate, "HEAD").report
    )
    # In a run the truth check finds it first, and the gates after it do not run.
    result = suite.run([], "HEAD")
    assert result.stages == ("ssw:protected",) and result.not_run == ("constants",)
    assert "data/ref.csv: modified, but it is protected by gate constants" in result.report


def test_a_protected_gate_outside_git_fails_with_the_reason(tmp_path: Path) -> None:
    gate = ProtectedGate(name="constants", kind="protected", paths=("data",))
    result = _suite(tmp_path, gate).run(None, "HEAD")
    assert not result.passed and "is in no git repository" in result.report


def test_each_gate_log_is_saved_in_the_log_folder(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    result = _suite(
        tmp_path,
        CommandGate(name="first", command="echo one"),
        CommandGate(name="second", command="echo two"),
        log_dir=logs,
    ).run(None)
    assert [p.name for p in result.logs] == ["001-first.log", "002-second.log"]
    assert (logs / "002-second.log").read_text(encoding="utf-8") == "two\n"


PYTEST_OUTPUT = """\
..F                                                                      [100%]
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(1, 2) == 4
E       assert 3 == 4
E        +  where 3 = add(1, 2)

tests/test_calc.py:4: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 3 == 4
1 failed, 2 passed in 0.02s
"""


def test_a_pytest_report_keeps_failing_ids_assertion_lines_and_the_summary() -> None:
    report = focused_report("tests: failed (exit 1)", PYTEST_OUTPUT)
    assert report.splitlines() == [
        "tests: failed (exit 1)",
        "FAILED tests/test_calc.py::test_add - assert 3 == 4",
        ">       assert add(1, 2) == 4",
        "E       assert 3 == 4",
        "E        +  where 3 = add(1, 2)",
        "tests/test_calc.py:4: AssertionError",
        "1 failed, 2 passed in 0.02s",
    ]


def test_a_script_run_through_npm_reports_what_failed_not_npms_banner() -> None:
    output = (
        "\n> lint\n> eslint .\n\n/r/src/a.js\n  1:7  error  'x' is never used  no-unused-vars\n"
        "\nnpm error Lifecycle script `lint` failed with error:\nnpm error code 1\n"
    )
    assert focused_report("lint: failed (exit 1)", output).splitlines() == [
        "lint: failed (exit 1)",
        "/r/src/a.js",
        "  1:7  error  'x' is never used  no-unused-vars",
    ]


def test_a_lint_report_keeps_the_first_lines_and_is_capped() -> None:
    output = "\n".join(f"src/m.py:{i}:1: E501 Line too long ({i} > 100)" for i in range(500))
    result = GateResult("lint", False, 0.1, "lint: failed (exit 1)", output)
    report = gate_report(result)
    lines = report.splitlines()
    assert lines[0] == "lint: failed (exit 1)"
    assert lines[1] == "src/m.py:0:1: E501 Line too long (0 > 100)"
    assert "[475 more lines in the log]" in report
    assert len(report) <= 2000
    huge = GateResult(
        "tests", False, 0.1, "tests: failed", PYTEST_OUTPUT.replace("E  ", "E" * 5000)
    )
    assert len(gate_report(huge)) <= 2000


def test_ssw_gates_prints_the_verdicts_and_exits_0_when_all_pass(tmp_path: Path) -> None:
    write_repo(tmp_path, {".stepswitch.toml": '[gates.check]\ncommand = "true"\n'})
    text, code = gates_command(tmp_path, [])
    assert code == 0
    assert "(.stepswitch.toml [gates]: check)" in text
    assert "  pass  check" in text
    assert "verdict: passed" in text


def test_ssw_gates_exits_1_and_prints_the_failing_report(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            ".stepswitch.toml": (
                '[gates.lint]\ncommand = "echo bad-line; exit 3"\nglobs = ["*.py"]\n'
                '[gates.docs]\ncommand = "true"\nglobs = ["*.md"]\n'
            ),
            "src/a.py": "A = 1\n",  # the changed file: --changed must name one that is there
        },
    )
    text, code = gates_command(tmp_path, ["src/a.py"])
    assert code == 1
    assert "  FAIL  lint" in text
    assert "  skip  docs" in text
    assert "verdict: FAILED at lint" in text
    assert "lint: failed (exit 3)\nbad-line" in text


RINGS = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "calc/helpers.py": "from calc.ops import add\n\ndef twice(x):\n    return add(x, x)\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    # Two import hops from calc/ops.py, and failing: only the wider ring finds it.
    "tests/test_helpers.py": (
        "from calc.helpers import twice\n\ndef test_twice():\n    assert twice(2) == 5\n"
    ),
    **{f"tests/test_other_{n}.py": PASSING for n in range(4)},
}


def test_direct_importers_run_first_then_the_wider_ring_before_the_full_suite(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, RINGS)
    result = _suite(tmp_path, _tests_gate(tmp_path)).run(["calc/ops.py"])
    assert result.stages == ("tests:impacted", "tests:impacted-wider")
    nearest, wider = result.results
    assert nearest.passed and not wider.passed
    assert "tests/test_helpers.py::test_twice" in wider.report
    assert not result.full_ran


def test_a_wider_ring_that_is_most_of_the_suite_is_left_to_the_full_suite(
    tmp_path: Path,
) -> None:
    files = {k: v for k, v in RINGS.items() if "test_other" not in k}
    write_repo(tmp_path, files)
    result = _suite(tmp_path, _tests_gate(tmp_path)).run(["calc/ops.py"])
    assert result.stages == ("tests:impacted", "tests:full")
    assert result.impacted == ("tests/test_helpers.py", "tests/test_ops.py")
    assert not result.results[-1].passed
