"""Make and just (gates/lang/make.py): a repository's `test` target is its gate only when no
language found a test suite; the target's output tail is its failure; nothing narrower runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stepswitch.gates.config import SuiteGate
from stepswitch.gates.detect import detect_gates
from stepswitch.gates.lang.make import MAKE
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import write_repo

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")

PROJECT = {
    "Makefile": "VALUE := value.txt\n\ntest:\n\t@sh check.sh $(VALUE)\n",
    "check.sh": '[ "$(cat "$1")" = 42 ] || { echo "$1 says $(cat "$1"), want 42"; exit 1; }\n',
    "value.txt": "42\n",
}


@needs_make
def test_a_makefiles_test_target_is_the_gate_when_nothing_else_has_tests(tmp_path: Path):
    config = detect_gates(write_repo(tmp_path / "p", PROJECT))
    (gate,) = config.gates
    assert isinstance(gate, SuiteGate)
    assert (gate.name, gate.runner, gate.command) == ("tests", "make", "make test")
    assert dict(config.reasons) == {"tests": "Makefile has a test target: make test"}
    assert config.languages == ("Make",)


@needs_make
def test_a_makefile_is_no_gate_where_a_language_found_tests(tmp_path: Path):
    files = {**PROJECT, "tests/test_value.py": "def test_value():\n    assert True\n"}
    config = detect_gates(write_repo(tmp_path / "p", files))
    assert [(g.name, g.kind) for g in config.gates] == [("tests", "tests")]  # pytest's


def test_a_makefile_without_a_test_rule_is_no_gate(tmp_path: Path):
    files = {"Makefile": "test := 1\ntests:\n\ttrue\n", "value.txt": "42\n"}
    assert detect_gates(write_repo(tmp_path / "p", files)).gates == ()


def test_a_target_runs_in_full_and_its_failure_is_the_end_of_its_output(tmp_path: Path):
    selection = MAKE.impacted(tmp_path, "make test", ["value.txt"], tmp_path / "r")
    assert selection.command is None
    assert selection.why == "a make or just target runs what it runs: the full suite only"
    output = "z" * 2000 + "\nvalue.txt says 41, want 42\nmake: *** [Makefile:3: test] Error 1\n"
    (failed,) = MAKE.failures(output, tmp_path / "r")
    assert failed.test_id == "test target"
    assert failed.message.endswith(
        "value.txt says 41, want 42\nmake: *** [Makefile:3: test] Error 1"
    )
    assert "z" not in failed.message  # whole lines only


@needs_make
def test_ssw_gates_fails_a_broken_change_at_the_target_with_its_output(tmp_path: Path):
    repo = write_repo(tmp_path / "p", {**PROJECT, "value.txt": "41\n"}, commit=True)
    failed = run_ssw_cli(["gates", repo])
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "(detected: tests)" in failed.stdout
    assert "value.txt says 41, want 42" in failed.stdout
