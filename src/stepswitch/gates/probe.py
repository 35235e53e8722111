"""What the gates' interpreter says of itself, asked in a child that sees nothing of the tree:
isolated (-I: no PYTHON* variable, no user site, neither the script's folder nor the current one
on sys.path), its own session, no stdin, bounded in time.

One start of the interpreter answers every question the gates ask of it (ADR 0091): the module
names its environment provides (`gates.shadowing`) and the pytest plugins it declares outside
the tree (`gates.plugins`). The answer is kept per interpreter and tree for the life of the
process: asked early (`ask_early`, ADR 0084) it is ready before the first gate needs it, and
whichever question comes first otherwise starts the one probe the other then reads. The agent
cannot make it stale: the child reads nothing of the tree (distributions under it are left
out, and neither it nor its parent folders are on the child's sys.path)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from stepswitch.util.on_thread import OnThread

PROBE_TIMEOUT_S = 60.0

# Each question in its own function, each failing alone: one that raises is unanswered (None),
# and the gates take that as "cannot say", as when it was a probe of its own.
_SCRIPT = """
import json, os, sys
from importlib import metadata

def provided():
    # What the interpreter itself and its site-packages provide, nothing of the worktree.
    names = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    installed = {}
    for name, dists in metadata.packages_distributions().items():
        installed[name] = sorted(set(dists))
    return {"stdlib": sorted(names), "installed": installed}

def plugins(tree):
    # The distributions of the interpreter's own sys.path, none under the tree but its own.
    tree = os.path.realpath(tree)
    own = [os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}]
    def under(path, folder):
        return path == folder or path.startswith(folder + os.sep)
    found = {}
    for dist in metadata.distributions():
        where = os.path.realpath(str(dist.locate_file("")))
        if under(where, tree) and not any(under(where, p) for p in own):
            continue
        for ep in dist.entry_points:
            if ep.group == "pytest11":
                found.setdefault(ep.name, [ep.value, str(getattr(dist, "_path", ""))])
    return found

def answer(question, *args):
    try:
        return question(*args)
    except Exception:
        return None

asked = sys.argv[2:]  # "provided": that question too (once per interpreter: it needs no tree)
print(json.dumps({
    "provided": answer(provided) if "provided" in asked else None,
    "plugins": answer(plugins, sys.argv[1]),
}))
"""


@contextlib.contextmanager
def probe_script(script: str) -> Iterator[Path]:
    """`script` as a file in a temporary folder of its own, removed with it after the block."""
    with tempfile.TemporaryDirectory(prefix="ssw-probe-") as folder:
        path = Path(folder) / "ssw_probe.py"
        path.write_text(script, encoding="utf-8")
        yield path


def run_probe(
    argv: list[str], cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`argv` in its own session (no terminal for the code it imports), without stdin, its output
    kept as text, stopped after PROBE_TIMEOUT_S. Raises OSError or subprocess.TimeoutExpired."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT_S,
        check=False,
    )


def ask_interpreter(python: Path, script: str, *args: str) -> Any:
    """The JSON `script` prints when `python` runs it with `args`; None when it fails, times
    out or prints no JSON (the caller says what that means)."""
    with probe_script(script) as path:
        try:
            done = run_probe([str(python), "-I", str(path), *args], cwd=path.parent)
            return json.loads(done.stdout) if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return None


def ask_environment(python: Path, tree: Path, provided: bool = True) -> dict[str, Any]:
    """One probe of `python`, afresh: "plugins" and, with `provided`, "provided", each its raw
    JSON answer or None (the whole probe failed, timed out, that question raised in the child,
    or it was not asked)."""
    data = ask_interpreter(python, _SCRIPT, str(tree), *(["provided"] if provided else []))
    return data if isinstance(data, dict) else {}


# Every probe asked in this process, kept under its interpreter and tree, running or done; and
# per interpreter the one probe that was asked what it provides (the first of that interpreter:
# the answer needs no tree, and listing every distribution's files is the probe's dearest part).
_kept: dict[tuple[Path, Path], OnThread[dict[str, Any]]] = {}
_provided_by: dict[Path, OnThread[dict[str, Any]]] = {}
_keeping = threading.Lock()


def ask_early(python: Path, tree: Path) -> None:
    """Start the probe of `python` for `tree` now, on a thread, unless one is kept already, so
    that the interpreter's start overlaps what the caller does next (ADR 0084)."""
    _probe_of(python, tree)


def environment(python: Path, tree: Path) -> dict[str, Any]:
    """The kept answer of `python` for `tree` (see `ask_environment`), the probe started now
    when none was asked; waits for it."""
    return _probe_of(python, tree).result()


def environment_any_tree(python: Path, tree: Path) -> dict[str, Any]:
    """For a question whose answer does not depend on the tree (what `python` provides): the
    kept answer of `python` for any tree, else `environment(python, tree)`."""
    with _keeping:
        kept = _provided_by.get(python)
    return kept.result() if kept is not None else environment(python, tree)


def end_early_probes() -> None:
    """Wait for every probe still running (bounded in time): a pre-flight that refuses leaves
    no thread behind."""
    with _keeping:
        asked = list(_kept.values())
    for probe in asked:
        probe.result()


def _probe_of(python: Path, tree: Path) -> OnThread[dict[str, Any]]:
    with _keeping:
        probe = _kept.get((python, tree))
        if probe is None:
            first = python not in _provided_by
            work = partial(ask_environment, python, tree, first)
            probe = _kept[(python, tree)] = OnThread(work, "ssw-interpreter-probe")
            if first:
                _provided_by[python] = probe
        return probe
