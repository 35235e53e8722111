"""The toolchains the Rust, Go and Make gates run: one the repository declares but PATH lacks is
a note, never a silent skip; what the sandbox shows of one in the user's home (gates/lang/
toolchain_view.py): rustup's proxies and RUSTUP_HOME, named outright since HOME is a scratch
one inside; a Go's installation folder; nothing for a toolchain outside the home, or for gates
that run neither."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.gates.config import CommandGate, GateConfig, SuiteGate
from stepswitch.gates.detect import detect_gates
from stepswitch.gates.lang.toolchain_view import toolchain_view
from tests.harness.repo import write_repo

DECLARED = {
    "go": ({"go.mod": "module example.com/m\n"}, "gates: no Go gates: go.mod declares the module"),
    "cargo": ({"Cargo.toml": '[package]\nname = "one"\n'}, "gates: no Rust gates: Cargo.toml"),
    "just": ({"justfile": "test:\n    true\n"}, "gates: no test gate: justfile has a test target"),
}


@pytest.mark.parametrize("tool", sorted(DECLARED))
def test_a_declared_toolchain_missing_from_path_is_a_note_not_a_silent_skip(
    tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    files, note = DECLARED[tool]
    repo = write_repo(tmp_path / "repo", files)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    config = detect_gates(repo)
    assert config.gates == ()
    (found,) = config.notes
    assert found.startswith(note) and f"but {tool} is not on PATH" in found


def _program(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def _config(*commands: str) -> GateConfig:
    tests = SuiteGate(name="tests", kind="suite", runner="cargo", command="cargo test")
    others = [CommandGate(name=f"c{i}", command=c) for i, c in enumerate(commands)]
    return GateConfig((*others, tests), "detected")


def test_a_rustup_cargo_in_the_home_is_shown_with_its_toolchains(tmp_path: Path):
    home = tmp_path.resolve() / "home"
    proxies = _program(home / ".cargo/bin/rustup").parent
    (proxies / "cargo").symlink_to("rustup")
    (home / ".rustup/toolchains").mkdir(parents=True)
    view = toolchain_view(_config(), {"PATH": str(proxies)}, home)
    assert view.env == {"RUSTUP_HOME": str(home / ".rustup")}
    assert view.read_only == (proxies, home / ".rustup")


def test_a_go_in_the_home_is_shown_as_its_installation_folder(tmp_path: Path):
    home = tmp_path.resolve() / "home"
    go = _program(home / "sdk/go/bin/go")
    view = toolchain_view(_config("go vet ./..."), {"PATH": str(go.parent)}, home)
    assert view.env == {}
    assert view.read_only == (go.parent, home / "sdk/go")


def test_a_toolchain_outside_the_home_or_gates_that_run_none_need_nothing(tmp_path: Path):
    system = _program(tmp_path.resolve() / "usr/bin/cargo").parent
    home = tmp_path.resolve() / "home"
    assert toolchain_view(_config(), {"PATH": str(system)}, home).read_only == ()
    none = GateConfig((CommandGate(name="lint", command="ruff check ."),), "detected")
    assert toolchain_view(none, {"PATH": str(system)}, home).read_only == ()
