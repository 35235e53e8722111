"""`ssw:node-config`: what a Node package's gates run, as the base commit has it. A gate that runs
a package.json script (`npm test`, `npm run lint`) runs whatever the worktree's package.json says
that script is: a change to `"test": "exit 0"` would pass it. So the scripts the gates run (with
the `pre` and `post` scripts npm runs around them), the `jest` and `mocha` tables of
package.json, and the test runners' own configuration files are compared with the base commit,
and any change fails, naming it: the Node counterpart of `ssw:test-config` (pytest's
configuration). The rest of package.json (dependencies, other scripts) is the change's to make.

In a run's worktree, which starts with no node_modules (the checkout's is found walking up),
files in a `node_modules` folder that the commit leaves out fail it too: node would load them
before the checkout's, so the tests would run code the change does not show (the Node side of
`ssw:left-out`, ADR 0047). The runners' caches there (`.vite`, `.cache`) are no modules.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stepswitch.gates.base import BaseUnreadable
from stepswitch.gates.config import GateConfig, ProtectedGate, SuiteGate
from stepswitch.gates.context import GateContext
from stepswitch.gates.lang.node_project import MANIFEST, RUNS_SCRIPT
from stepswitch.gates.protected import protected_verdict
from stepswitch.gates.runner import GateResult

NODE_CONFIG_CHECK = "ssw:node-config"
NODE_CONFIG_FIX = (
    "Undo these changes: the gates run these scripts and read this configuration as the base "
    "commit has them (change the code or the tests instead), and node_modules is the user's "
    "(a dependency the change needs goes in package.json; the user installs it)."
)
_TABLES = ("jest", "mocha")
_STEMS = ("jest.config", "vitest.config", "vite.config", "vitest.workspace")
_SUFFIXES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".json")
_MOCHA_FILES = (".mocharc.js", ".mocharc.cjs", ".mocharc.json", ".mocharc.jsonc")
RUNNER_FILES = (
    *(f"{stem}{suffix}" for stem in _STEMS for suffix in _SUFFIXES),
    *_MOCHA_FILES,
    ".mocharc.yml",
    ".mocharc.yaml",
)


def scripts_run(config: GateConfig) -> list[str]:
    """The package.json scripts the gates run, with npm's `pre` and `post` ones around them."""
    names: list[str] = []
    for gate in config.gates:
        if isinstance(gate, ProtectedGate):
            continue
        found = RUNS_SCRIPT.match(gate.command.strip())
        if found is not None:
            name = found["named"] or "test"
            names += [f"pre{name}", name, f"post{name}"]
    return list(dict.fromkeys(names))


def _manifest(text: str | None) -> dict[str, Any]:
    try:
        data = json.loads(text) if text is not None else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _changed_parts(base: dict[str, Any], now: dict[str, Any], scripts: Iterable[str]) -> list[str]:
    def table(data: dict[str, Any], key: str) -> dict[str, Any]:
        value = data.get(key)
        return value if isinstance(value, dict) else {}

    problems = [
        f"{MANIFEST}: scripts.{name}: changed since the base commit"
        for name in scripts
        if table(base, "scripts").get(name) != table(now, "scripts").get(name)
    ]
    problems += [
        f"{MANIFEST}: {key}: changed since the base commit"
        for key in _TABLES
        if base.get(key) != now.get(key)
    ]
    return problems


# Caches the runners keep in node_modules (Vite's and Vitest's, babel's): never modules.
_CACHES = frozenset({".vite", ".vite-temp", ".cache", ".vitest"})
_NODE_RUNNERS = frozenset({"node-test", "jest", "vitest", "mocha"})


def left_out_modules(root: Path, listed: set[str]) -> list[str]:
    """Files in a `node_modules` folder of a run's worktree that its commit leaves out (git
    ignores them; `listed` holds what it does not), the runners' caches aside: node finds them
    before the checkout's node_modules, so the tests would load code the change does not show."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        rel_here = here.relative_to(root)
        if rel_here.parts[:1] == (".git",):
            dirs[:] = []
            continue
        inside = "node_modules" in rel_here.parts
        if inside and rel_here.name in _CACHES and rel_here.parent.name == "node_modules":
            dirs[:] = []
            continue
        if inside:
            found += [p for f in files if (p := (rel_here / f).as_posix()) not in listed]
        links = [d for d in dirs if (here / d).is_symlink()]
        if inside:
            found += [p for d in links if (p := (rel_here / d).as_posix()) not in listed]
        dirs[:] = [d for d in sorted(dirs) if d not in links]
    return sorted(found)


def _runs_node(config: GateConfig, scripts: list[str]) -> bool:
    return bool(scripts) or any(
        isinstance(g, SuiteGate) and g.runner in _NODE_RUNNERS for g in config.gates
    )


def node_config_check(context: GateContext, config: GateConfig, base: str) -> GateResult | None:
    """The scripts the gates run and the test runners' configuration against the base commit,
    and in a run's worktree the node_modules files its commit leaves out; None without a base
    commit, or when no gate is Node's."""
    scripts = scripts_run(config)
    if context.base is None or not _runs_node(config, scripts):
        return None
    began = time.monotonic()
    try:
        commit = context.base.commit(base)
        before = context.base.text(commit, MANIFEST)
    except BaseUnreadable:
        return None  # the truth check says why
    problems: list[str] = []
    if context.tree is not None and context.judges_commit:
        listed, _ = context.tree.listed_paths()
        problems += [
            f"{path}: in node_modules, and the commit leaves it out"
            for path in left_out_modules(context.root, listed)[:20]
        ]
    if before is None:
        return _verdict(problems, began)
    now_path = context.root / MANIFEST
    now = now_path.read_text(encoding="utf-8", errors="replace") if now_path.is_file() else None
    problems += _changed_parts(_manifest(before), _manifest(now), scripts)
    for name in RUNNER_FILES:
        path = context.root / name
        current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        try:
            old = context.base.read(commit, name)
        except BaseUnreadable:
            old = None
        if current != old:
            problems.append(f"{name}: {'changed' if old and current else 'added or removed'}")
    return _verdict(problems, began)


def _verdict(problems: list[str], began: float) -> GateResult:
    return protected_verdict(
        NODE_CONFIG_CHECK,
        problems,
        time.monotonic() - began,
        "what the Node gates run changed",
        NODE_CONFIG_FIX,
    )
