"""`ssw:node-config`: what a Node package's gates run, as the base commit has it. A gate that runs
a package.json script (`npm test`, `npm run lint`) runs whatever the worktree's package.json says
that script is: a change to `"test": "exit 0"` would pass it. So the scripts the gates run (with
the `pre` and `post` scripts npm runs around them), the `jest` and `mocha` tables of
package.json, and the test runners' own configuration files are compared with the base commit,
and any change fails, naming it: the Node counterpart of `ssw:test-config` (pytest's
configuration). The rest of package.json (dependencies, other scripts) is the change's to make.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from stepswitch.gates.base import BaseUnreadable
from stepswitch.gates.config import GateConfig, ProtectedGate
from stepswitch.gates.context import GateContext
from stepswitch.gates.lang.node_project import MANIFEST, RUNS_SCRIPT
from stepswitch.gates.protected import protected_verdict
from stepswitch.gates.runner import GateResult

NODE_CONFIG_CHECK = "ssw:node-config"
NODE_CONFIG_FIX = (
    "Undo these changes: the gates run these scripts and read this configuration as the base "
    "commit has them (change the code or the tests instead)."
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


def node_config_check(context: GateContext, config: GateConfig, base: str) -> GateResult | None:
    """The scripts the gates run and the test runners' configuration against the base commit;
    None without a base commit, or when no gate runs a script of a package.json there."""
    scripts = scripts_run(config)
    if context.base is None or not scripts:
        return None
    began = time.monotonic()
    try:
        commit = context.base.commit(base)
        before = context.base.text(commit, MANIFEST)
    except BaseUnreadable:
        return None  # the truth check says why
    if before is None:
        return None
    now_path = context.root / MANIFEST
    now = now_path.read_text(encoding="utf-8", errors="replace") if now_path.is_file() else None
    problems = _changed_parts(_manifest(before), _manifest(now), scripts)
    for name in RUNNER_FILES:
        path = context.root / name
        current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        try:
            old = context.base.read(commit, name)
        except BaseUnreadable:
            old = None
        if current != old:
            problems.append(f"{name}: {'changed' if old and current else 'added or removed'}")
    return protected_verdict(
        NODE_CONFIG_CHECK,
        problems,
        time.monotonic() - began,
        "what the Node gates run changed",
        NODE_CONFIG_FIX,
    )
