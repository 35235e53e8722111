"""Which Python runs the gates, and the environment that makes the tests import the worktree's code.

The interpreter is chosen in this order (the first that applies wins):
1. `python = "..."` under `[tool.stepswitch]` in pyproject.toml, or at the top of
   `.stepswitch.toml`: the repository's own override. A path is relative to the repository (the
   user's checkout, where an untracked virtual environment lives), or a command on PATH.
2. The repository's virtual environment: `.venv/bin/python`, then `venv/bin/python`, in the
   worktree and then in the user's checkout (a run's worktree has no untracked files).
3. The active virtual environment: `$VIRTUAL_ENV/bin/python`.
4. Stepswitch's own Python (`sys.executable`), said as such.

Whatever installs the project into that interpreter (an editable install's `.pth` or finder, a
plain install, nothing), the gates put the worktree's own source folder (`src/` for a src layout,
else the worktree itself) first on sys.path, before site-packages, so the tests import the code
the model edited. `check_imports` verifies it before the first paid call: it imports each
top-level package of the project with the gates' interpreter and environment, in the worktree,
and refuses when one resolves outside it (or does not import at all).

No file of the worktree runs when that interpreter starts. Python's `site` imports the first
`sitecustomize` (and, with the user site on, `usercustomize`) it finds on sys.path, and at that
moment sys.path holds PYTHONPATH but not yet the script's folder or, for `python -m pytest`, the
current one (both are added after `site`). So the worktree is kept off PYTHONPATH: PYTHONPATH
holds only ssw's start-up folder (`ssw_pytest/ssw_start`, in ssw's own package, read-only in the
sandbox), whose `sitecustomize` puts SSW_PYTHONPATH (the source folder, then any PYTHONPATH the
environment had) in its place once `site` is done, and runs the interpreter's own sitecustomize.
PYTHONNOUSERSITE=1 turns the user site off: the sandbox's scratch HOME is writable, and a `.pth`
or `usercustomize` put in its ~/.local would run at start-up too. The model's `run` tool gets the
same environment, so its `python -m pytest` or `python -c 'import pkg'` imports as the gates do.
Not done: `-I`/`-E` (they drop PYTHONPATH, the start-up folder and the gates' pytest plugin with
it) and `-P`/PYTHONSAFEPATH (the folder it leaves out is added only after `site`, and the tests
expect it there). A gate command that runs Python with `-S` skips the start-up module, so it does
not see the source folder first; neither does one that replaces PYTHONPATH (the pre-flight's
refusal does not cover those either).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.errors import ConfigError, UsageError
from stepswitch.gates.probe import probe_script, run_probe
from stepswitch.util.toml import parse_toml

PYTHON_KEY = "python"
# The folder of the gates' start-up module, and the variable that module reads (see above).
START_UP = Path(__file__).resolve().parent / "ssw_pytest" / "ssw_start"
DEFERRED_PATH = "SSW_PYTHONPATH"
# Top-level folders that are never the project's importable code.
NOT_CODE = frozenset(
    {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "bench"}
    | {"scripts", "tools", "ci", "ci_tools", "build", "dist", "site-packages", "changelog.d"}
)


@dataclass(frozen=True)
class Interpreter:
    python: Path  # the executable the gates run
    source: str  # why this one, for the line printed at the run's start

    @property
    def venv(self) -> Path | None:
        """The virtual environment it belongs to, if any (bin/python inside a pyvenv.cfg folder)."""
        folder = self.python.parent.parent
        return folder if (folder / "pyvenv.cfg").is_file() else None

    def line(self) -> str:
        """One line for the run's start, e.g. `gates: Python /r/.venv/bin/python (the ...)`."""
        return f"gates: Python {self.python} ({self.source})"


def checkout_of(root: Path) -> Path:
    """The user's checkout for a run's worktree (<repo>/.ssw/worktrees/<id>), else root itself."""
    if root.parent.name == "worktrees" and root.parent.parent.name == ".ssw":
        return root.parent.parent.parent
    return root


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return parse_toml(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(path.name, "(syntax)", str(exc), "fix the TOML syntax") from exc
    except OSError:
        return {}


def _python_setting(root: Path) -> tuple[str, str] | None:
    """(value, "file key") of the repository's `python` setting, if it has one."""
    found: list[tuple[str, str, object]] = []
    pyproject, own = root / "pyproject.toml", root / ".stepswitch.toml"
    if pyproject.is_file():
        tool = _read_toml(pyproject).get("tool", {})
        table = tool.get("stepswitch", {}) if isinstance(tool, dict) else {}
        if isinstance(table, dict) and PYTHON_KEY in table:
            found.append(("pyproject.toml", "tool.stepswitch.python", table[PYTHON_KEY]))
    if own.is_file():
        data = _read_toml(own)
        if PYTHON_KEY in data:
            found.append((".stepswitch.toml", PYTHON_KEY, data[PYTHON_KEY]))
    if not found:
        return None
    file, key, value = found[0]
    if len(found) > 1:
        raise ConfigError(
            file, key, "also set in .stepswitch.toml", "set the gates' python in one file"
        )
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            file, key, "must be a path or command", 'e.g. python = ".venv-test/bin/python"'
        )
    return value.strip(), f"{file} {key}"


def _resolve_setting(value: str, where: str, roots: list[Path]) -> Path:
    given = Path(value).expanduser()
    candidates = [given] if given.is_absolute() else [r / given for r in roots]
    if not given.is_absolute() and "/" not in value:
        on_path = shutil.which(value)
        if on_path:
            candidates.append(Path(on_path))
    for candidate in candidates:
        if _executable(candidate):
            return candidate.absolute()
    file, key = where.split(" ", 1)
    raise ConfigError(
        file,
        key,
        f"{value!r} is not an executable Python (looked in {', '.join(map(str, candidates))})",
        "give a path relative to the repository, an absolute path, or a command on PATH",
    )


def find_interpreter(root: Path, environ: Mapping[str, str] | None = None) -> Interpreter:
    """The Python that runs the gates for the repository (or run worktree) at `root`, in the
    order of this module's docstring. Raises ConfigError for a bad `python` setting."""
    environ = os.environ if environ is None else environ
    checkout = checkout_of(root)
    roots = [checkout] if checkout == root else [checkout, root]
    setting = _python_setting(root)
    if setting is not None:
        value, where = setting
        return Interpreter(_resolve_setting(value, where, roots), f"set by {where}")
    for base in dict.fromkeys([root, checkout]):
        for name in (".venv", "venv"):
            python = base / name / "bin" / "python"
            if _executable(python):
                whose = "the repository's" if base == checkout else "the worktree's"
                return Interpreter(python.absolute(), f"{whose} {name}")
    active = environ.get("VIRTUAL_ENV")
    if active and _executable(Path(active) / "bin" / "python"):
        python = Path(active) / "bin" / "python"
        own = Path(sys.prefix).resolve() == Path(active).resolve()
        label = "the active virtualenv $VIRTUAL_ENV" + (", which is ssw's own" if own else "")
        return Interpreter(python, label)
    return Interpreter(
        Path(sys.executable),
        "ssw's own Python: the repository has no .venv or venv and sets no "
        "[tool.stepswitch] python",
    )


# -- the project's code -------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    source_root: Path  # the folder that goes first on sys.path: <root>/src or <root>
    packages: tuple[str, ...]  # the project's top-level import names, found in source_root


def _is_name(text: str) -> bool:
    return text.isidentifier() and not text.startswith(".")


def _top_level(folder: Path) -> list[str]:
    """Packages (folders with __init__.py) and modules directly in `folder`."""
    names: list[str] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return names
    for entry in entries:
        if entry.name in NOT_CODE or not _is_name(entry.stem):
            continue
        if entry.is_dir() and (entry / "__init__.py").is_file() and _is_name(entry.name):
            names.append(entry.name)
    return names


def _project_modules(root: Path, folder: Path) -> list[str]:
    """Single-module projects (`six.py`): the [project] name when it is a module here."""
    data = _read_toml(root / "pyproject.toml") if (root / "pyproject.toml").is_file() else {}
    project = data.get("project", {})
    name = project.get("name") if isinstance(project, dict) else None
    if not isinstance(name, str):
        return []
    module = name.replace("-", "_").replace(".", "_").lower()
    return [module] if (folder / f"{module}.py").is_file() else []


def project_layout(root: Path) -> Layout:
    """Where the worktree's importable code is: `src/` when it holds packages, else the root."""
    src = root / "src"
    if src.is_dir():
        found = _top_level(src) or _project_modules(root, src)
        if found:
            return Layout(src, tuple(found))
    return Layout(root, tuple(_top_level(root) or _project_modules(root, root)))


# -- the environment ----------------------------------------------------------------------------


def _python_path(env: Mapping[str, str]) -> list[str]:
    """The folders PYTHONPATH stands for in `env`: the start-up folder for what it defers."""
    found: list[str] = []
    for entry in env.get("PYTHONPATH", "").split(os.pathsep):
        found += env.get(DEFERRED_PATH, "").split(os.pathsep) if entry == str(START_UP) else [entry]
    return [p for p in found if p]


def gate_environment(
    root: Path, env: Mapping[str, str], interpreter: Interpreter, layout: Layout | None = None
) -> dict[str, str]:
    """`env` (already without secrets) for gates in the worktree at `root`: the worktree's source
    first on sys.path once `site` has run (not before: see the module's docstring), no user site,
    and the interpreter's virtual environment active (first on PATH)."""
    layout = layout or project_layout(root)
    out = dict(env)
    out.pop("PYTHONHOME", None)
    # Every entry waits for `site`: a relative one or one inside the worktree would expose it.
    deferred = dict.fromkeys([str(layout.source_root), *_python_path(env)])
    out["PYTHONPATH"] = str(START_UP)
    out[DEFERRED_PATH] = os.pathsep.join(deferred)
    out["PYTHONNOUSERSITE"] = "1"
    # Bytecode written by the tests is not part of a change, and a .pyc written at one gate run
    # can be read at the next when an edit keeps the file's size within the same second.
    out["PYTHONDONTWRITEBYTECODE"] = "1"
    venv = interpreter.venv
    if venv is not None:
        out["VIRTUAL_ENV"] = str(venv)
        path = [p for p in env.get("PATH", "").split(os.pathsep) if p]
        out["PATH"] = os.pathsep.join(dict.fromkeys([str(venv / "bin"), *path]))
    elif "VIRTUAL_ENV" in out:
        del out["VIRTUAL_ENV"]  # the interpreter is not that environment's
    return out


# -- the pre-flight check -----------------------------------------------------------------------

# Run as a file from a temporary folder, not with -c: neither the worktree nor the current
# folder is put first on sys.path for it, so it sees what the gates' start-up module and
# site-packages give.
_PROBE = """
import importlib, json, sys
out = {}
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
    except BaseException as exc:
        out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        continue
    where = getattr(module, "__file__", None)
    paths = [where] if where else list(getattr(module, "__path__", []))
    out[name] = {"paths": paths}
print("SSW-PROBE " + json.dumps(out))
"""


@dataclass(frozen=True)
class ImportCheck:
    interpreter: Interpreter
    layout: Layout
    found: dict[str, str]  # package -> where it was imported from

    def line(self) -> str:
        shown = ", ".join(f"{name} from {path}" for name, path in self.found.items())
        return f"gates: the tests import {shown or 'no package of the project'}"


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def check_imports(
    root: Path, env: Mapping[str, str], interpreter: Interpreter, layout: Layout | None = None
) -> ImportCheck:
    """Import each top-level package of the project with the gates' interpreter and environment
    `env` (from gate_environment), in `root`; raise UsageError (one line, naming the interpreter,
    the package and where it came from) when one resolves outside `root` or does not import."""
    layout = layout or project_layout(root)
    if not layout.packages:
        return ImportCheck(interpreter, layout, {})
    with probe_script(_PROBE) as script:
        try:  # the project's code runs at import: run_probe gives it no terminal
            done = run_probe(
                [str(interpreter.python), str(script), *layout.packages], cwd=root, env=env
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageError(
                f"gates: cannot run {interpreter.python} ({interpreter.source}): {exc}; "
                'set [tool.stepswitch] python = "..." to a working Python'
            ) from exc
    line = next((x for x in done.stdout.splitlines() if x.startswith("SSW-PROBE ")), None)
    if line is None:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(
            f"gates: {interpreter.python} ({interpreter.source}) could not check the imports: "
            f"{tail}"
        )
    results: dict[str, dict[str, Any]] = json.loads(line.removeprefix("SSW-PROBE "))
    found: dict[str, str] = {}
    for name in layout.packages:
        result = results.get(name, {})
        if "error" in result:
            raise UsageError(
                f"gates: the tests cannot import {name} with {interpreter.python} "
                f"({interpreter.source}): {result['error']}; install the project's dependencies "
                f'there, or set [tool.stepswitch] python = "..." to the Python that has them'
            )
        paths = [Path(p) for p in result.get("paths", [])]
        outside = next((p for p in paths if not _inside(p, root)), None)
        if outside is not None or not paths:
            shown = outside or "nowhere (no file)"
            raise UsageError(
                f"gates: the tests would import {name} from {shown} (outside the run's "
                f"worktree {root}) with {interpreter.python} ({interpreter.source}); "
                f"fix: make {shlex.quote(str(layout.source_root))} importable first (no "
                f"PYTHONPATH or .pth that puts another checkout ahead), or set "
                f'[tool.stepswitch] python = "..."'
            )
        found[name] = str(paths[0])
    return ImportCheck(interpreter, layout, found)
