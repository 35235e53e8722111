"""Whether the code that measures is the code a commit holds: one function every producer of
evidence asks (the bench's records, bench/perf, bench/gates), so "clean" means one thing (ADR
0028, issue 44).

Dirty, each reason named:
- a tracked file of the code changed, staged or not (`src/`, `registry/`, `pyproject.toml` and
  the producer's own scripts: not the results a producer writes beside them);
- an index entry git was told not to look at (`assume-unchanged`, `skip-worktree`): git status
  then shows the file clean whatever it holds;
- a file git does not track under a source root (`src/`), ignored or excluded or not: Python
  imports what is there, whether git lists it or not (bytecode caches aside);
- an interpreter start-up that runs code the checkout does not hold: `sitecustomize` or
  `usercustomize` loaded, `PYTHONPATH`/`PYTHONSTARTUP`/`PYTHONHOME` set, or a `.pth` file with an
  `import` line in a site folder that no installed distribution ships.
"""

from __future__ import annotations

import csv
import os
import site
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from stepswitch.util.git import run_git

SOURCE_ROOTS = ("src",)
CODE = ("src", "registry", "pyproject.toml")
STARTUP_VARIABLES = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")
STARTUP_MODULES = ("sitecustomize", "usercustomize")


@dataclass(frozen=True)
class SourceState:
    commit: str | None  # None: not a git checkout (then `dirty` is None: unknown)
    dirty: bool | None
    why: tuple[str, ...] = ()  # what made it dirty, a reason each


def source_state(
    top: Path, scripts: Iterable[str] = (), startup: Iterable[str] | None = None
) -> SourceState:
    """The commit of the checkout at `top` and whether the code it runs is that commit's:
    `scripts` (pathspecs) are the producer's measuring code beside CODE; `startup` (default:
    this interpreter's `startup_changes()`) joins the reasons."""
    head = run_git(top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", user_config=True)
    if head.status != 0 or not head.out.strip():
        return SourceState(None, None, ("not a git checkout with a commit",))
    why = tree_changes(top, (*CODE, *scripts))
    why += startup_changes() if startup is None else list(startup)
    return SourceState(head.out.strip(), bool(why), tuple(why))


def _git_z(top: Path, *args: str) -> list[str]:
    done = run_git(top, *args, user_config=True)
    if done.status != 0:
        return [f"git {args[0]} failed: {done.err}"]
    return [entry for entry in done.out.split("\0") if entry]


def tree_changes(top: Path, code: tuple[str, ...]) -> list[str]:
    """The checkout's reasons to be dirty (the start-up's aside)."""
    why = []
    status = ("--no-optional-locks", "status", "--porcelain=v1", "-z", "-uno", "--", *code)
    changed = _git_z(top, *status)
    if changed:
        why.append(f"tracked files changed: {_some([c[3:] for c in changed])}")
    # `git ls-files -v`: a lower-case tag is assume-unchanged, S is skip-worktree.
    hidden = [e[2:] for e in _git_z(top, "ls-files", "-v", "-z") if e[0].islower() or e[0] == "S"]
    if hidden:
        why.append(f"index entries git does not look at (assume-unchanged or skip-worktree): "
                   f"{_some(hidden)}")  # fmt: skip
    present = [r for r in SOURCE_ROOTS if (top / r).is_dir()]
    if present:
        untracked = _git_z(top, "ls-files", "-z", "--others", "--", *present)
        loadable = [p for p in untracked if "__pycache__/" not in p]
        if loadable:
            why.append(f"files git does not track under {', '.join(present)}: {_some(loadable)}")
    return why


def startup_changes(
    environ: Mapping[str, str] | None = None,
    modules: Iterable[str] | None = None,
    site_folders: Iterable[str] | None = None,
) -> list[str]:
    """What this interpreter ran at start-up that no checkout or installed distribution holds."""
    environ = os.environ if environ is None else environ
    loaded = set(sys.modules if modules is None else modules)
    why = [f"{name} is set" for name in STARTUP_VARIABLES if environ.get(name)]
    why += [f"{name} was loaded at start-up" for name in STARTUP_MODULES if name in loaded]
    folders = [*site.getsitepackages(), site.getusersitepackages()]
    strays = stray_pth_files(folders if site_folders is None else site_folders)
    why += [
        f"{path} runs code at every start-up and no installed package ships it" for path in strays
    ]
    return why


def stray_pth_files(site_folders: Iterable[str]) -> list[str]:
    """`.pth` files with an `import` line (Python runs it at start-up) that no installed
    distribution lists among its files."""
    running = []
    for folder in site_folders:
        for path in sorted(Path(folder).glob("*.pth")) if Path(folder).is_dir() else []:
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            if any(line.startswith(("import ", "import\t")) for line in lines):
                running.append(path)
    if not running:
        return []  # no distribution's file list to read
    shipped = _shipped_pth_files()
    return [str(path) for path in running if str(path.resolve()) not in shipped]


def _shipped_pth_files() -> set[str]:
    shipped = set()
    for dist in metadata.distributions():
        for name in _pth_entries(dist):
            shipped.add(str(Path(str(dist.locate_file(name))).resolve()))
    return shipped


def _pth_entries(dist: metadata.Distribution) -> list[str]:
    """The `.pth` files among what `dist` lists as installed: read from its RECORD's lines
    when it has one (a wheel's; parsing every entry as a path costs more than the rest of the
    check), else from its file list (an egg's)."""
    record = dist.read_text("RECORD")
    if record is None:
        return [str(file) for file in dist.files or () if file.name.endswith(".pth")]
    found = []
    for row in csv.reader(line for line in record.splitlines() if ".pth" in line):
        if row and row[0].endswith(".pth"):
            found.append(row[0])
    return found


def _some(paths: list[str], shown: int = 3) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more
