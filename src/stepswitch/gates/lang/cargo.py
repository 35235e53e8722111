"""Rust: the gates a Cargo project gets, and the `cargo` runner.

Detection reads the root's Cargo.toml: a package, a workspace, or both. The tests gate is `cargo
test` (`--workspace` when there is a workspace, so every member's tests run); `cargo fmt --check`
and `cargo clippy -- -D warnings` only where the project says it keeps them clean (a
rustfmt.toml, a clippy.toml or `[lints.clippy]`, or the component in rust-toolchain.toml):
rustup installs both with every toolchain, so their being installed says nothing of the
project's code. A declared tool that is missing is a note, never a silent skip.

Impacted-first: the crates whose folders hold a changed file, and the crates that depend on them
(`cargo_crates`), as `cargo test -p A -p B`; a change to a crate's tests/, benches/ or examples/
reaches that crate alone. A single crate, a change outside every crate (the workspace's manifest,
Cargo.lock, .cargo/) or a command that is not plain `cargo test`: the full suite only, and the
selection says why. Every run is `--no-fail-fast` (a crate that already fails does not hide the
next one's tests), its output copied to the runner's report, where `cargo_report` reads the
failing tests and how many ran."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.gates.config import CommandGate, SuiteGate
from stepswitch.gates.lang.base import Detected, Detection, FailedTest, Selection
from stepswitch.gates.lang.cargo_crates import MANIFEST, Project, read_manifest, read_project
from stepswitch.gates.lang.cargo_report import libtest_failures, tests_started
from stepswitch.gates.lang.command_words import command_words, runs
from stepswitch.gates.lang.toolchain import missing_note, on_path
from stepswitch.util.text_files import text_or_empty

LANGUAGE = "Rust"
_TOOLCHAIN_FILES = ("rust-toolchain.toml", "rust-toolchain")
_RUST_GLOBS = ("*.rs", "Cargo.toml", "Cargo.lock")


def _components(root: Path) -> set[str]:
    """The components rust-toolchain.toml asks for ("rustfmt", "clippy")."""
    for name in _TOOLCHAIN_FILES:
        toolchain = read_manifest(root / name).get("toolchain")
        if isinstance(toolchain, dict) and isinstance(toolchain.get("components"), list):
            return {c for c in toolchain["components"] if isinstance(c, str)}
    return set()


def _lints_clippy(manifest: dict[str, Any]) -> bool:
    """Whether the manifest's `[lints.clippy]` or `[workspace.lints.clippy]` sets a lint."""
    workspace = manifest.get("workspace")
    tables = [
        manifest.get("lints"),
        workspace.get("lints") if isinstance(workspace, dict) else None,
    ]
    return any(isinstance(t, dict) and isinstance(t.get("clippy"), dict) for t in tables)


def _why_configured(root: Path, files: tuple[str, ...], component: str) -> str | None:
    """What says the project keeps this tool's checks clean, or None."""
    for name in files:
        if (root / name).is_file():
            return name
    if component in _components(root):
        return f"rust-toolchain.toml components include {component}"
    return None


def detect(root: Path) -> Detection:
    """The gates of the Cargo project at root, cheapest first: format, lint, tests."""
    if not (root / MANIFEST).is_file():
        return Detection(LANGUAGE)
    manifest = read_manifest(root / MANIFEST)
    if not manifest:
        return Detection(LANGUAGE, notes=(f"gates: {MANIFEST} does not parse: no Rust gates",))
    project = read_project(root)
    if not project.crates:
        return Detection(LANGUAGE, notes=(f"gates: {MANIFEST} names no crate: no Rust gates",))
    names = ", ".join(c.name for c in project.crates)
    declared = f"{MANIFEST} declares " + (
        f"a workspace of {len(project.crates)} crates ({names})"
        if project.workspace
        else f"the crate {names}"
    )
    if not on_path("cargo"):
        return Detection(LANGUAGE, notes=(missing_note("cargo", declared, "Rust gates"),))
    everything = " --workspace" if project.workspace else ""
    gates: list[Detected] = []
    notes: list[str] = []
    fmt_files = ("rustfmt.toml", ".rustfmt.toml")
    why = _why_configured(root, fmt_files, "rustfmt")
    if why is not None:
        if on_path("cargo-fmt"):
            command = f"cargo fmt{' --all' if project.workspace else ''} --check"
            spec = CommandGate(
                name="format", command=command, timeout_s=120.0, globs=("*.rs", *fmt_files)
            )
            gates.append(Detected(spec, f"{why}: the project formats with rustfmt"))
        else:
            notes.append(missing_note("cargo-fmt", f"{why} configures rustfmt", "format gate"))
    clippy_files = ("clippy.toml", ".clippy.toml")
    why = _why_configured(root, clippy_files, "clippy")
    if why is None and _lints_clippy(manifest):
        why = f"{MANIFEST} [lints.clippy]"
    if why is not None:
        if on_path("cargo-clippy"):
            command = f"cargo clippy{everything} --all-targets -- -D warnings"
            globs = (*_RUST_GLOBS, *clippy_files)
            spec = CommandGate(name="lint", command=command, timeout_s=600.0, globs=globs)
            gates.append(Detected(spec, f"{why}: the project lints with clippy"))
        else:
            notes.append(missing_note("cargo-clippy", f"{why} configures clippy", "lint gate"))
    tests = SuiteGate(name="tests", kind="suite", runner="cargo", command=f"cargo test{everything}")
    gates.append(Detected(tests, f"{declared}: cargo test"))
    return Detection(LANGUAGE, tuple(gates), tuple(notes))


_CHOOSES_PACKAGES = ("-p", "--package", "--exclude")
_OWN_TARGETS = ("tests/", "benches/", "examples/")
_NO_FAIL_FAST = "--no-fail-fast"
# Files every crate reads: a change to one may change any crate's build.
_SHARED = ("Cargo.toml", "Cargo.lock", *_TOOLCHAIN_FILES)


def _narrowed(words: list[str], crates: list[str]) -> str | None:
    """`cargo test ARGS` for `crates` only; None when ARGS already choose the packages."""
    rest = words[2:]
    split = rest.index("--") if "--" in rest else len(rest)
    own, after = rest[:split], rest[split:]
    if any(w.split("=")[0] in _CHOOSES_PACKAGES or w.startswith("-p") for w in own):
        return None
    kept = [w for w in own if w not in ("--workspace", "--all", _NO_FAIL_FAST)]
    chosen = [arg for name in crates for arg in ("-p", name)]
    return shlex.join(["cargo", "test", _NO_FAIL_FAST, *chosen, *kept, *after])


def _copied(command: str, report: Path) -> str:
    """`command` with its output (standard error merged in, as the gates merge it) also written
    to `report`; its own exit status kept."""
    return f"set -o pipefail; {{ {command}; }} 2>&1 | tee {shlex.quote(str(report))}"


def _every_binary(command: str) -> str:
    """`cargo test --no-fail-fast ARGS`: a failing test binary does not stop the next one, so a
    suite that already failed in one crate still runs (and judges) the others' tests."""
    words = command_words(command)
    if not runs(words, "cargo", "test") or words is None or _NO_FAIL_FAST in words:
        return command
    return shlex.join(["cargo", "test", _NO_FAIL_FAST, *words[2:]])


def _outside(project: Project, changed: Sequence[str]) -> str | None:
    """The first changed path that is no one crate's own: a file every crate reads, or one in
    no crate's folder."""
    for path in changed:
        if path in _SHARED or path.startswith(".cargo/") or project.owner(path) is None:
            return path
    return None


def _reached(project: Project, changed: Sequence[str]) -> tuple[set[str], set[str]]:
    """The folders of the crates the change touches, and of those whose tests it can reach:
    the touched ones and their dependents, but for a crate's tests, benches and examples,
    which no dependent builds."""
    touched: set[str] = set()
    own_only: set[str] = set()
    for path in changed:
        owner = project.owner(path)
        assert owner is not None  # _outside returned it otherwise
        inner = path.removeprefix(f"{owner.folder}/" if owner.folder else "")
        (own_only if inner.startswith(_OWN_TARGETS) else touched).add(owner.folder)
    return touched | own_only, project.dependents(touched) | own_only


@dataclass(frozen=True)
class CargoRunner:
    name: str = "cargo"
    language: str = LANGUAGE

    def full_command(self, command: str, report: Path) -> str:
        """The command as the project runs it, every test binary run, its output (libtest's is
        the report) copied to `report`."""
        return _copied(_every_binary(command), report)

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        """The changed crates and their dependents, as `cargo test -p ...`."""
        words = command_words(command)
        if not runs(words, "cargo", "test"):
            return Selection(None, (), "the command is not plain `cargo test`: the full suite only")
        assert words is not None
        project = read_project(root)
        if len(project.crates) < 2:
            return Selection(None, (), "a single crate: the full suite only")
        outside = _outside(project, changed)
        if outside is not None:
            why = f"{outside} changed, which is no one crate's own: the full suite only"
            return Selection(None, (), why)
        touched, reached = _reached(project, changed)
        if len(reached) == len(project.crates):
            return Selection(
                None, (), "every crate is or depends on a changed one: the full suite only"
            )
        chosen = [c.name for c in project.crates if c.folder in reached]
        narrowed = _narrowed(words, chosen)
        if narrowed is None:
            return Selection(None, (), "the command names its own packages: the full suite only")
        changed_names = [c.name for c in project.crates if c.folder in touched]
        why = f"{len(chosen)} of {len(project.crates)} crates: {', '.join(changed_names)} changed"
        others = [n for n in chosen if n not in changed_names]
        if others:
            why += f"; {', '.join(others)} depend{'s' if len(others) == 1 else ''} on it"
        return Selection(_copied(narrowed, report), tuple(chosen), why)

    def failures(self, output: str, report: Path) -> list[FailedTest]:
        """The failing tests named in libtest's output."""
        return libtest_failures(text_or_empty(report) or output)

    def tests_run(self, report: Path) -> int | None:
        """The tests libtest ran, over every test binary; None without a report."""
        text = text_or_empty(report)
        return tests_started(text) if text else None


CARGO = CargoRunner()
