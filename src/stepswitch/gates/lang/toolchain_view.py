"""What the sandbox must show of the Rust and Go toolchains the gates run, when they live in the
user's home (which the sandbox hides, and which is a scratch HOME inside it: util/child_env.py).

rustup's `cargo` on PATH is a proxy that finds its toolchains through RUSTUP_HOME (by default
~/.rustup): its folder and RUSTUP_HOME are shown read-only and RUSTUP_HOME named outright, so the
project's own toolchain (rust-toolchain.toml's included) runs inside. CARGO_HOME is not shown: it
may hold a registry token, and the scratch HOME gives cargo one of its own. A Go or a plain cargo
installed in the home: its installation folder, read-only. Nothing is installed or copied."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from stepswitch.gates.config import CommandGate, GateConfig, SuiteGate

_RUNNER_TOOLS = {"cargo": "cargo", "go": "go"}


@dataclass(frozen=True)
class ToolchainView:
    env: dict[str, str]  # to add to the gates' environment
    read_only: tuple[Path, ...]  # to show read-only in the sandbox


def _tools(config: GateConfig) -> set[str]:
    """cargo and go, when a gate runs them (its runner, or its command's first word)."""
    tools: set[str] = set()
    for gate in config.gates:
        if isinstance(gate, SuiteGate) and gate.runner in _RUNNER_TOOLS:
            tools.add(_RUNNER_TOOLS[gate.runner])
        if isinstance(gate, CommandGate | SuiteGate):
            first = gate.command.split(maxsplit=1)[0] if gate.command.strip() else ""
            if first in _RUNNER_TOOLS.values():
                tools.add(first)
    return tools


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def toolchain_view(config: GateConfig, env: Mapping[str, str], home: Path) -> ToolchainView:
    """The view of cargo and go (as `env`'s PATH finds them) that `config`'s gates need."""
    added: dict[str, str] = {}
    shown: list[Path] = []
    for tool in sorted(_tools(config)):
        found = shutil.which(tool, path=env.get("PATH"))
        if found is None:
            continue
        real = Path(found).resolve()
        if real.name == "rustup":
            rustup_home = Path(env.get("RUSTUP_HOME") or home / ".rustup")
            if rustup_home.is_dir():
                added["RUSTUP_HOME"] = str(rustup_home)
                shown += [Path(found).parent, real.parent, rustup_home]
        elif _inside(real, home):
            # <prefix>/bin/go: the go tool finds its GOROOT from where it runs.
            shown += [Path(found).parent, real.parent.parent]
    return ToolchainView(added, tuple(dict.fromkeys(shown)))
