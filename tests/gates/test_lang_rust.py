"""Rust gates (gates/lang/cargo.py): a workspace of two crates, `app` depending on
`core-math`. Detection gives `cargo test --workspace` (and fmt and clippy where the project
configures them) with its reasons; libtest's output names the failing test, its file and
message; impacted-first runs the crates a change reaches (a leaf crate alone, nothing narrower
when every crate is reached or the workspace's own files change); `ssw gates` fails a broken
workspace naming the test. The build lives in the fixture's own target folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from stepswitch.gates.config import CommandGate, SuiteGate
from stepswitch.gates.detect import detect_gates
from stepswitch.gates.lang.cargo import CARGO
from tests.harness.cli import run_process, run_ssw_cli
from tests.harness.repo import edited, write_repo

needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on PATH")

WORKSPACE = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n',
    ".gitignore": "/target\n",
    "crates/core/Cargo.toml": """
        [package]
        name = "core-math"
        version = "0.1.0"
        edition = "2021"
        """,
    "crates/core/src/lib.rs": """
        pub fn add(a: i32, b: i32) -> i32 {
            a + b
        }

        #[cfg(test)]
        mod tests {
            #[test]
            fn adds() {
                assert_eq!(super::add(1, 2), 3, "one and two");
            }
        }
        """,
    "crates/app/Cargo.toml": """
        [package]
        name = "app"
        version = "0.1.0"
        edition = "2021"

        [dependencies]
        core-math = { path = "../core" }
        """,
    "crates/app/src/lib.rs": """
        pub fn twice(a: i32) -> i32 {
            core_math::add(a, a)
        }

        #[cfg(test)]
        mod tests {
            #[test]
            fn doubles() {
                assert_eq!(super::twice(2), 4, "twice two");
            }

            #[test]
            fn keeps_zero() {
                assert_eq!(super::twice(0), 0);
            }
        }
        """,
}
BREAK_TWICE = ("crates/app/src/lib.rs", "core_math::add(a, a)", "core_math::add(a, a) + 1")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workspace for the file's tests, built once in its own target folder; each test's edit
    is undone when it ends (`edited`)."""
    return write_repo(tmp_path_factory.mktemp("rust") / "shapes", WORKSPACE, commit=True)


@pytest.fixture(scope="module")
def cargo_env(workspace: Path) -> dict[str, str]:
    return {**os.environ, "CARGO_TARGET_DIR": str(workspace / "target"), "CARGO_NET_OFFLINE": "1"}


def _run(root: Path, command: str, env: dict[str, str]) -> tuple[int, str]:
    """`command`'s exit status and output, its standard error merged in as the gates merge it."""
    done = run_process(["bash", "-c", f"{command} 2>&1"], root, env, timeout=240)
    return done.returncode, done.stdout


@needs_cargo
def test_a_workspace_gets_cargo_test_of_every_crate_with_its_reason(workspace: Path):
    config = detect_gates(workspace)
    assert [g.name for g in config.gates] == ["tests"]
    (tests,) = config.gates
    assert isinstance(tests, SuiteGate)
    assert (tests.runner, tests.command) == ("cargo", "cargo test --workspace")
    assert dict(config.reasons) == {
        "tests": "Cargo.toml declares a workspace of 2 crates (app, core-math): cargo test"
    }
    assert config.languages == ("Rust",)


@needs_cargo
def test_fmt_and_clippy_are_gates_only_where_the_project_configures_them(tmp_path: Path):
    crate = {
        "Cargo.toml": '[package]\nname = "one"\n\n[lints.clippy]\nall = "warn"\n',
        "rustfmt.toml": 'edition = "2021"\n',
        "src/lib.rs": "pub fn one() -> i32 {\n    1\n}\n",
    }
    config = detect_gates(write_repo(tmp_path / "one", crate))
    commands = {g.name: g.command for g in config.gates if isinstance(g, CommandGate | SuiteGate)}
    if not (shutil.which("cargo-fmt") and shutil.which("cargo-clippy")):
        pytest.skip("rustfmt or clippy is not installed")
    assert commands == {
        "format": "cargo fmt --check",
        "lint": "cargo clippy --all-targets -- -D warnings",
        "tests": "cargo test",
    }
    reasons = dict(config.reasons)
    assert reasons["format"] == "rustfmt.toml: the project formats with rustfmt"
    assert reasons["lint"] == "Cargo.toml [lints.clippy]: the project lints with clippy"


@needs_cargo
def test_impacted_runs_a_leaf_crates_tests_alone_and_still_fails_on_them(
    workspace: Path, tmp_path: Path, cargo_env: dict[str, str]
):
    report = tmp_path / "report"
    code, output = _run(workspace, CARGO.full_command("cargo test --workspace", report), cargo_env)
    assert code == 0, output
    everything = CARGO.tests_run(report)
    with edited(workspace, *BREAK_TWICE):
        changed = ["crates/app/src/lib.rs"]
        selection = CARGO.impacted(workspace, "cargo test --workspace", changed, report)
        assert selection.tests == ("app",)
        assert selection.why == "1 of 2 crates: app changed"
        assert selection.command is not None
        assert "cargo test --no-fail-fast -p app" in selection.command
        code, output = _run(workspace, selection.command, cargo_env)
    assert code != 0
    assert everything is not None and CARGO.tests_run(report) == 2 < everything
    failed = {f.test_id: f for f in CARGO.failures(output, report)}
    assert set(failed) == {"app::tests::doubles", "app::tests::keeps_zero"}
    assert failed["app::tests::doubles"].file == "crates/app/src/lib.rs"
    assert "twice two" in failed["app::tests::doubles"].message
    assert "left: 5" in failed["app::tests::doubles"].message


@needs_cargo
def test_the_full_suite_runs_every_crates_tests_past_a_failing_one_naming_each_by_crate(
    workspace: Path, tmp_path: Path, cargo_env: dict[str, str]
):
    """cargo stops at the first failing test binary unless told not to: a suite that already
    fails in one crate would never judge the next one's tests."""
    report = tmp_path / "report"
    command = CARGO.full_command("cargo test --workspace", report)
    with edited(workspace, "crates/core/src/lib.rs", "a + b", "a - b"):
        code, output = _run(workspace, command, cargo_env)
    assert code != 0
    failed = {f.test_id for f in CARGO.failures(output, report)}
    assert {"core_math::tests::adds", "app::tests::doubles"} <= failed


@needs_cargo
def test_a_crate_that_does_not_compile_is_named_with_the_compilers_error(
    workspace: Path, tmp_path: Path, cargo_env: dict[str, str]
):
    report = tmp_path / "report"
    command = CARGO.full_command("cargo test --workspace", report)
    with edited(workspace, "crates/core/src/lib.rs", "a + b", '"a + b"'):
        code, output = _run(workspace, command, cargo_env)
    assert code != 0
    (failed,) = CARGO.failures(output, report)
    assert failed.test_id == "core-math (does not compile)"
    assert failed.file == "crates/core/src/lib.rs"
    assert "mismatched types" in failed.message


def test_a_change_every_crate_reaches_or_no_crate_owns_runs_the_full_suite_and_says_so(
    workspace: Path,
):
    full = {
        "crates/core/src/lib.rs": "every crate is or depends on a changed one",
        "Cargo.toml": "Cargo.toml changed, which is no one crate's own",
        "Cargo.lock": "Cargo.lock changed, which is no one crate's own",
        "README.md": "README.md changed, which is no one crate's own",
    }
    for changed, why in full.items():
        selection = CARGO.impacted(workspace, "cargo test --workspace", [changed], Path("r"))
        assert (selection.command, selection.why) == (None, f"{why}: the full suite only")


def test_a_cargo_toml_that_does_not_parse_is_a_note(tmp_path: Path):
    config = detect_gates(write_repo(tmp_path / "one", {"Cargo.toml": "[package\n"}))
    assert (config.gates, config.notes) == (
        (),
        ("gates: Cargo.toml does not parse: no Rust gates",),
    )


def test_a_single_crate_runs_the_full_suite_only_and_says_so(tmp_path: Path):
    crate = write_repo(tmp_path / "one", {"Cargo.toml": '[package]\nname = "one"\n'})
    selection = CARGO.impacted(crate, "cargo test", ["src/lib.rs"], Path("r"))
    assert (selection.command, selection.why) == (None, "a single crate: the full suite only")


@needs_cargo
def test_ssw_gates_fails_a_broken_workspace_at_its_tests_naming_the_test(tmp_path: Path):
    path, old, new = BREAK_TWICE
    files = {**WORKSPACE, path: WORKSPACE[path].replace(old, new)}
    repo = write_repo(tmp_path / "shapes", files, commit=True)
    failed = run_ssw_cli(["gates", repo], timeout=240)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "(detected: tests)" in failed.stdout
    assert "FAILED at tests" in failed.stdout
    assert "tests::doubles" in failed.stdout and "twice two" in failed.stdout


def test_a_change_to_a_crates_own_tests_runs_that_crate_alone(workspace: Path):
    """No dependent builds core-math's integration tests: app's tests cannot reach them."""
    changed = ["crates/core/tests/sums.rs"]
    selection = CARGO.impacted(workspace, "cargo test --workspace", changed, Path("r"))
    assert (selection.tests, selection.why) == (("core-math",), "1 of 2 crates: core-math changed")


PRINTING_TEST = """
     Running unittests src/lib.rs (target/debug/deps/app-0123456789abcdef)

running 1 test
test tests::doubles ... FAILED

failures:

---- tests::doubles stdout ----
step 1 of a long story
step 2 of a long story

thread 'tests::doubles' (7) panicked at crates/app/src/lib.rs:9:9:
twice two
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::doubles

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
"""


def test_a_panics_message_comes_before_what_the_test_printed(tmp_path: Path):
    (failed,) = CARGO.failures(PRINTING_TEST, tmp_path / "no-report")
    assert failed.test_id == "app::tests::doubles"
    assert failed.message.splitlines() == [
        "twice two",
        "step 1 of a long story",
        "step 2 of a long story",
    ]
