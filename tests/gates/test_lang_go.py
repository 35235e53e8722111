"""Go gates (gates/lang/go.py): a module of three packages, `app` importing `calc` and `text`
on its own. Detection gives gofmt, go vet and go test with their reasons; `go test -json` names
the failing test and its message; impacted-first runs the packages a change reaches (a leaf's
own, a package's importers) and nothing narrower when go.mod changes; `ssw gates` passes the
untouched module and fails a broken one naming the test. Go's build cache is the test's own."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from stepswitch.gates.config import CommandGate, SuiteGate
from stepswitch.gates.detect import detect_gates
from stepswitch.gates.lang.go import GO
from tests.harness.cli import run_process, run_ssw_cli
from tests.harness.repo import edited, write_repo

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="no go on PATH")

MODULE = {
    "go.mod": "module example.com/shapes\n\ngo 1.19\n",
    "calc/calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
    "calc/calc_test.go": """
        package calc

        import "testing"

        func TestAdd(t *testing.T) {
        \tif got := Add(1, 2); got != 3 {
        \t\tt.Errorf("Add(1, 2) = %d, want 3", got)
        \t}
        }
        """,
    "app/app.go": """
        package app

        import "example.com/shapes/calc"

        // Twice doubles.
        func Twice(a int) int { return calc.Add(a, a) }
        """,
    "app/app_test.go": """
        package app

        import "testing"

        func TestTwice(t *testing.T) {
        \tif got := Twice(2); got != 4 {
        \t\tt.Errorf("Twice(2) = %d, want 4", got)
        \t}
        }
        """,
    "text/text.go": """
        package text

        // Shout shouts.
        func Shout(s string) string { return s + "!" }
        """,
    "text/text_test.go": """
        package text

        import "testing"

        func TestShout(t *testing.T) {
        \tif Shout("a") != "a!" {
        \t\tt.Error("no")
        \t}
        }
        """,
}
BREAK_ADD = ("calc/calc.go", "return a + b", "return a - b")
BREAK_TWICE = ("app/app.go", "calc.Add(a, a)", "calc.Add(a, a+1)")


@pytest.fixture(scope="module")
def go_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """This environment with Go's caches in a folder of the tests' own, nothing fetched."""
    cache = tmp_path_factory.mktemp("go")
    return {
        **os.environ,
        "GOCACHE": str(cache / "build"),
        "GOPATH": str(cache / "path"),
        "GOFLAGS": "",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
    }


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One module for the file's tests, so Go's cache (which keys on the folder) serves them
    all; each test's edit is undone when it ends (`edited`)."""
    return write_repo(tmp_path_factory.mktemp("go-module") / "shapes", MODULE, commit=True)


def _run(root: Path, command: str, env: dict[str, str]) -> tuple[int, str]:
    done = run_process(["bash", "-c", command], root, env)
    return done.returncode, done.stdout + done.stderr


@needs_go
def test_a_go_module_gets_gofmt_vet_and_go_test_each_with_its_reason(module: Path):
    config = detect_gates(module)
    assert [g.name for g in config.gates] == ["format", "vet", "tests"]
    fmt, vet, tests = config.gates
    assert isinstance(fmt, CommandGate) and "gofmt -l" in fmt.command
    assert isinstance(vet, CommandGate) and vet.command == "go vet ./..."
    assert isinstance(tests, SuiteGate) and (tests.runner, tests.command) == ("go", "go test ./...")
    reasons = dict(config.reasons)
    assert reasons["tests"] == "go.mod declares the module example.com/shapes: go test ./..."
    assert config.languages == ("Go",)


@needs_go
def test_the_format_gate_lists_unformatted_go_files_but_not_test_data(
    module: Path, go_env: dict[str, str]
):
    (fmt, *_) = detect_gates(module).gates
    assert isinstance(fmt, CommandGate)
    (module / "calc/testdata").mkdir()
    (module / "calc/testdata/odd.go").write_text("package  odd\n")
    try:
        assert _run(module, fmt.command, go_env) == (0, "")
        with edited(module, "calc/calc.go", "{ return a + b }", "{return a+b}"):
            code, output = _run(module, fmt.command, go_env)
    finally:
        shutil.rmtree(module / "calc/testdata")
    assert (code, output) == (1, "gofmt -l: not formatted:\n./calc/calc.go\n")


@needs_go
def test_impacted_runs_a_leaf_packages_tests_alone_and_still_fails_on_them(
    module: Path, tmp_path: Path, go_env: dict[str, str]
):
    report = tmp_path / "report.json"
    assert _run(module, GO.full_command("go test ./...", report), go_env)[0] == 0
    everything = GO.tests_run(report)
    with edited(module, *BREAK_TWICE):
        selection = GO.impacted(module, "go test ./...", ["app/app.go"], report)
        assert selection.tests == ("./app",)
        assert selection.why == "1 of 3 packages with tests reach ./app"
        assert selection.command is not None
        code, output = _run(module, selection.command, go_env)
    assert code != 0
    assert everything == 3 and GO.tests_run(report) == 1
    (failed,) = GO.failures(output, report)
    assert failed.test_id == "example.com/shapes/app.TestTwice"
    assert "app_test.go:7: Twice(2) = 5, want 4" in failed.message


@needs_go
def test_the_full_suite_names_every_failing_test_with_its_message(
    module: Path, tmp_path: Path, go_env: dict[str, str]
):
    report = tmp_path / "report.json"
    with edited(module, *BREAK_ADD):
        code, output = _run(module, GO.full_command("go test ./...", report), go_env)
    assert code != 0
    failed = {f.test_id: f for f in GO.failures(output, report)}
    add, twice = "example.com/shapes/calc.TestAdd", "example.com/shapes/app.TestTwice"
    assert set(failed) == {add, twice}  # app's through calc
    assert "calc_test.go:7: Add(1, 2) = -1, want 3" in failed[add].message


@needs_go
def test_a_package_that_does_not_build_is_named_with_the_compilers_error(
    module: Path, tmp_path: Path, go_env: dict[str, str]
):
    report = tmp_path / "report.json"
    with edited(module, "calc/calc.go", "return a + b", 'return "a + b"'):
        code, output = _run(module, GO.full_command("go test ./...", report), go_env)
    assert code != 0
    failed = {f.test_id: f for f in GO.failures(output, report)}
    assert "cannot use" in failed["example.com/shapes/calc"].message
    assert "example.com/shapes/app" in failed  # it imports calc: it cannot build either


def test_impacted_adds_the_packages_that_import_a_changed_one_and_nothing_else(module: Path):
    selection = GO.impacted(module, "go test -count=1 ./...", ["calc/calc.go"], Path("r.json"))
    assert selection.tests == ("./app", "./calc")
    assert selection.command == "go test -json -count=1 ./app ./calc > r.json"


def test_a_change_to_go_mod_or_outside_every_package_runs_the_full_suite_and_says_so(
    module: Path,
):
    for changed in ("go.mod", "README.md"):
        selection = GO.impacted(module, "go test ./...", [changed], Path("r.json"))
        assert selection.command is None
        assert (
            selection.why == f"{changed} changed, which is in no one package: the full suite only"
        )


def test_a_test_files_own_import_makes_its_package_reach_the_imported_one(module: Path):
    """text's test (not its code) imports calc: a change to calc reaches text's tests."""
    imports = 'import (\n\t"testing"\n\n\t_ "example.com/shapes/calc" // its init\n)'
    with edited(module, "text/text_test.go", 'import "testing"', imports):
        selection = GO.impacted(module, "go test ./...", ["calc/calc.go"], Path("r.json"))
    assert selection.command is None  # now every package's tests reach calc
    assert selection.why == "every package's tests reach the change: the full suite only"


SUM_TEST = """
    package calc

    import (
    \t"os"
    \t"strings"
    \t"testing"
    )

    func TestSumFromTestdata(t *testing.T) {
    \twant, _ := os.ReadFile("testdata/sum.txt")
    \tif got := Add(1, 2); strings.TrimSpace(string(want)) != "3" {
    \t\tt.Errorf("Add(1, 2) = %d, testdata/sum.txt says %s", got, want)
    \t}
    }
    """


@needs_go
def test_ssw_gates_fails_a_change_to_test_data_naming_the_test(tmp_path: Path):
    """One package, the sandbox's Go cache empty: gofmt and go vet skip (no Go file changed),
    go test fails."""
    files = {k: v for k, v in MODULE.items() if k in ("go.mod", "calc/calc.go")}
    files |= {"calc/calc_test.go": SUM_TEST, "calc/testdata/sum.txt": "4\n"}
    repo = write_repo(tmp_path / "shapes", files, commit=True)
    failed = run_ssw_cli(["gates", repo, "--changed", "calc/testdata/sum.txt"], timeout=240)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "(detected: format, vet, tests)" in failed.stdout
    assert re.search(r"skip +vet", failed.stdout)
    assert "FAILED at tests" in failed.stdout
    assert "Add(1, 2) = 3, testdata/sum.txt says 4" in failed.stdout


def test_a_change_to_a_packages_test_file_runs_that_package_alone(module: Path):
    """calc_test.go is compiled into calc's tests only, not into app's, which imports calc."""
    selection = GO.impacted(module, "go test ./...", ["calc/calc_test.go"], Path("r.json"))
    assert (selection.tests, selection.why) == (
        ("./calc",),
        "1 of 3 packages with tests reach ./calc",
    )
