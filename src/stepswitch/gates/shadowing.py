"""Modules the change adds where they would be imported instead of the standard library's or an
installed distribution's: the worktree's root and its source root come first on the tests'
sys.path, so a new `argparse.py` or `iniconfig.py` there runs inside pytest itself, before any
test, and can rig what it reports. Such a file is a failing verdict naming it, never run.

Only what the change adds counts: a module the base commit already holds at the root (many
projects keep a `test/` package, which shadows the standard library's) is the project's own.

Anywhere in the tree, a file the change adds or edits in a distribution's metadata folder
(`*.dist-info`, `*.egg-info`) fails too: with autoload off, pytest still looks each `-p NAME` up
among the entry points of every distribution on sys.path, the tree's root first (ADR 0047).

Anywhere in the tree, a package (`stats/__init__.py`) beside a module of the same name
(`stats.py`) makes the module dead: Python imports the package. A change that adds either half
fails too, naming both: the tests would run the package while the module still holds the code
everyone reads (a broken `stats.py` behind a package that passes, or that rigs pytest).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from stepswitch.gates.left_out import METADATA_SUFFIXES
from stepswitch.gates.probe import environment_any_tree

SHADOW_CHECK = "ssw:shadowing"
SHADOW_FIX = (
    "Rename or remove these files: a module at the root of the tree is imported before the "
    "standard library and the installed packages, pytest's own among them."
)
# Names some distributions install by mistake (their own tests, docs): nothing imports them as
# that distribution's, so a project's folder of that name shadows nothing.
_STRAY_TOP_LEVELS = frozenset({"tests", "test", "testing", "docs", "doc", "examples", "scripts"})


def provided_names(python: Path, tree: Path) -> tuple[frozenset[str], dict[str, str]]:
    """The standard library's top-level module names of `python`, and the top-level names its
    installed distributions provide (name -> distribution); empty when it cannot say. The
    answer of the one probe of `python` (`gates.probe`), whatever tree it was asked for: what
    the interpreter provides does not depend on it."""
    data = environment_any_tree(python, tree).get("provided")
    if not isinstance(data, dict):
        data = {}
    installed = {str(k): ", ".join(v) for k, v in dict(data.get("installed", {})).items()}
    return frozenset(data.get("stdlib", ())), installed


def _module_name(entry: Path) -> str | None:
    """The top-level module a root entry is imported as, if it is one a regular import finds
    first (a namespace folder without __init__.py does not shadow a module found later)."""
    if entry.is_symlink():
        return None
    name = entry.name
    if entry.is_dir():
        return name if (entry / "__init__.py").is_file() and name.isidentifier() else None
    stem, _, suffix = name.partition(".")
    if suffix in ("py", "pyc", "pyw", "so") or suffix.endswith(".so"):
        return stem if stem.isidentifier() else None
    return None


def shadowing_modules(
    roots: Iterable[Path], top: Path, base_paths: set[str], python: Path
) -> list[str]:
    """One line per module the change added in a folder of `roots` (under the worktree `top`)
    that shadows a standard-library module or an installed distribution's; `base_paths` are
    the base commit's files (relative to `top`)."""
    stdlib, installed = provided_names(python, top)
    base_tops = {p.split("/")[0] for p in base_paths} | {
        "/".join(p.split("/")[:2]) for p in base_paths
    }
    found: list[str] = []
    for root in dict.fromkeys(roots):
        try:
            entries = sorted(root.iterdir())
        except OSError:
            continue
        for entry in entries:
            name = _module_name(entry)
            rel = entry.relative_to(top).as_posix()
            if name is None or rel in base_tops:
                continue
            if name in stdlib:
                found.append(f"{rel}: added, and shadows the standard library's module {name}")
            elif name in installed and name not in _STRAY_TOP_LEVELS:
                found.append(
                    f"{rel}: added, and shadows module {name} of the installed {installed[name]}"
                )
    return found


def twin_modules(root: Path, candidates: Iterable[str], base_paths: set[str]) -> list[str]:
    """One line per package beside a module of the same name (`x/__init__.py` and `x.py`)
    among `candidates` (paths relative to `root`, e.g. what the change touched) where the base
    commit (`base_paths`) did not hold both."""
    found: dict[str, str] = {}
    for rel in candidates:
        path = PurePosixPath(rel)
        if path.name == "__init__.py" and path.parent != PurePosixPath("."):
            package = path.parent
        elif path.suffix == ".py" and path.stem.isidentifier():
            package = path.with_suffix("")
        else:
            continue
        init, module = f"{package}/__init__.py", f"{package}.py"
        if init in base_paths and module in base_paths:
            continue
        if (root / init).is_file() and (root / module).is_file():
            found[str(package)] = (
                f"{package}/: a package beside the module {module}: Python imports the package, "
                f"so {module} is not what runs"
            )
    return [found[k] for k in sorted(found)]


def added_metadata(root: Path, changed: Iterable[str]) -> list[str]:
    """One line per file among `changed` (relative to `root`) that is inside a distribution's
    metadata folder and is there now (added or edited)."""
    return [
        f"{rel}: added, a distribution's metadata (pytest would find its entry points, "
        "`importlib.metadata` would report it as installed)"
        for rel in sorted(changed)
        if any(p.endswith(METADATA_SUFFIXES) for p in PurePosixPath(rel).parts[:-1])
        and (root / rel).is_file()
    ]
