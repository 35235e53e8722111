"""Which pytest plugins the gates' pytest loads: the project's declared ones, never one the tree
carries (ADR 0047).

pytest loads every `pytest11` entry point of every distribution `importlib.metadata` finds on
sys.path, and the gates put the worktree (its root, its source folder) on sys.path: an
`x-1.0.dist-info/entry_points.txt` the agent writes there is a plugin of the gates' pytest, one
that can turn failures into passes. So every test stage runs with autoload off
(PYTEST_DISABLE_PLUGIN_AUTOLOAD), and the plugins of the distributions installed in the gates'
interpreter outside the worktree (its environment's own folders count as outside, wherever it
lies) are named in PLUGINS_VAR: entry point name -> [`module[:attr]`, its distribution's
metadata folder], as a Python that sees nothing of the tree (`-I`) tells `gates.probe`. The
`ssw_select` plugin registers each under its entry point's name when pytest loads it, before
the project's conftest files. Command and golden gates get
the same environment: a pytest they start obeys the same rule. Not `-p NAME`: pytest looks a
`-p` name up among the entry points of every distribution on sys.path, the tree's first, so a
tree's dist-info declaring that name would still be the one loaded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from stepswitch.gates.probe import ask_early, environment
from stepswitch.gates.probe import end_early_probes as end_early_probes

PLUGIN_DIR = Path(__file__).resolve().parent / "ssw_pytest"
PLUGIN = "ssw_select"
PLUGINS_VAR = "SSW_PYTEST_PLUGINS"
AUTOLOAD_OFF = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"


def ask_plugins_early(python: Path, tree: Path) -> None:
    """Start asking `python` for the plugins `declared_plugins(python, tree)` returns, on a
    thread, so that the interpreter's start overlaps what the caller does next (ADR 0084); the
    same probe answers `gates.shadowing` (ADR 0091)."""
    ask_early(python, tree)


def declared_plugins(python: Path, tree: Path) -> dict[str, list[str]]:
    """The `pytest11` entry points (name -> [`module[:attr]`, its distribution's metadata
    folder], the first of a name on sys.path) of the distributions `python` has installed
    outside `tree`; empty when it cannot say. The kept answer of the one probe of `python` for
    `tree` (`gates.probe`), started now if nothing asked it earlier."""
    data = environment(python, tree).get("plugins")
    if not isinstance(data, dict):
        return {}
    return {
        str(name): [str(part) for part in found]
        for name, found in data.items()
        if isinstance(found, list) and len(found) == 2
    }


def plugin_env(env: Mapping[str, str], python: Path, tree: Path) -> dict[str, str]:
    """`env` for any pytest a gate starts: autoload off, `ssw_select` loaded (its folder on
    PYTHONPATH, `-p` in PYTEST_ADDOPTS after any the environment gives), and the plugins
    declared outside `tree` named for it to register."""
    out = dict(env)
    out[AUTOLOAD_OFF] = "1"
    out[PLUGINS_VAR] = json.dumps(declared_plugins(python, tree), sort_keys=True)
    out["PYTHONPATH"] = os.pathsep.join([out.get("PYTHONPATH", ""), str(PLUGIN_DIR)]).strip(
        os.pathsep
    )
    out["PYTEST_ADDOPTS"] = f"{out.get('PYTEST_ADDOPTS', '')} -p {PLUGIN}".strip()
    return out
