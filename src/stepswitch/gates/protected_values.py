"""Protected constants by value: the module the code imports, not only the protected file's text.

`protected.check_constants` compares the protected file with the base commit, but Python may
import something else under that module's name, or code that runs at import may rebind the
value. Two checks close what they can (docs/decisions/0022-protection-by-value.md):

- Statically (`shadowing`), the protected module's import is resolved with Python's own rules over
  the worktree's files and over the base commit's, with each folder the tests may have first on
  sys.path (the worktree root, the source root, pytest's `pythonpath`, the folders pytest inserts
  for test files and conftest.py files) put first in turn. In one folder a regular package (a
  folder holding `__init__` as .py, .pyc or extension) wins over `X.py`, and so does an
  extension module `X.*.so`; `X.py` wins over `X.pyc`. A folder without `__init__` (a namespace
  portion) loses to a module found anywhere on the path. A file the worktree resolves to that the
  base commit does not fails, naming both paths, and so does an added `X.pyc` beside the
  protected `X.py`. `.pth` files are not looked at.
- Dynamically (`imported_values`), the gates' interpreter, with their environment and in their
  sandbox, imports each protected module as `python -m pytest` in the worktree would, and prints
  each constant's repr when its type is exactly a literal's; one that differs from the base
  commit's literal fails, naming the constant, both values and the file the module came from. A
  module that does not import there (a dependency the gates' environment lacks) is checked
  statically only, and the log says so.

Not seen: code that tells the probe from a test run (a conftest.py, a fixture, a test, an
`if "pytest" in sys.modules`) and changes the value only under pytest.
"""

from __future__ import annotations

import ast
import os
import re
import secrets
import shlex
import stat
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Protocol

from stepswitch.gates.protected import clip, constant_bindings, wanted_names
from stepswitch.gates.pytest_config import read_pytest_config
from stepswitch.gates.runner import GateResult

PROBE_TIMEOUT_S = 60.0
_EXTENSION = re.compile(r"(?:\.[^./]+)?\.so\Z")  # what follows a module's name in `X.<tag>.so`
# Folders pytest does not collect from (its default norecursedirs), nor do we look in.
_NOT_COLLECTED = re.compile(
    r"\.|.*\.egg\Z|_darcs\Z|CVS\Z|\{arch\}\Z|build\Z|dist\Z|node_modules\Z|venv\Z"
)
_HOW = {
    "package": "the package is imported instead",
    "extension module": "the extension module is imported instead",
    "bytecode": "the bytecode is imported instead",
    "module": "it is imported instead",
}

# -- resolving an import as Python's path finder does -------------------------------------------


class Files(Protocol):
    """A tree of files by root-relative posix path ("" is the root)."""

    def is_file(self, rel: str) -> bool: ...
    def is_dir(self, rel: str) -> bool: ...
    def names(self, folder: str) -> Sequence[str]: ...


class WorktreeFiles:
    """The worktree as Python's import sees it: links followed, git-ignored files included."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _mode(self, rel: str) -> int:
        try:
            return os.stat(self.root / rel).st_mode
        except (OSError, ValueError):
            return 0

    def is_file(self, rel: str) -> bool:
        return stat.S_ISREG(self._mode(rel))

    def is_dir(self, rel: str) -> bool:
        return stat.S_ISDIR(self._mode(rel))

    def names(self, folder: str) -> Sequence[str]:
        try:
            return sorted(os.listdir(self.root / folder))
        except OSError:
            return []


class CommitFiles:
    """The files of the base commit, from its paths."""

    def __init__(self, paths: Collection[str]) -> None:
        self.files = set(paths)
        self.children: dict[str, set[str]] = {}
        for path in self.files:
            parts = PurePosixPath(path).parts
            for depth in range(len(parts)):
                self.children.setdefault("/".join(parts[:depth]), set()).add(parts[depth])

    def is_file(self, rel: str) -> bool:
        return rel in self.files

    def is_dir(self, rel: str) -> bool:
        return rel in self.children

    def names(self, folder: str) -> Sequence[str]:
        return sorted(self.children.get(folder, ()))


@dataclass(frozen=True)
class Step:
    """What one dotted name of an import resolves to."""

    name: str  # "textstats.constants"
    how: str  # "package", "extension module", "module", "bytecode", "namespace", "missing"
    file: str | None = None  # the file that runs; None for a namespace or nothing
    folders: tuple[str, ...] = ()  # where its submodules are looked for


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _module_file(files: Files, folder: str, stem: str) -> tuple[str, str] | None:
    """The file Python loads for module `stem` in `folder`, and what it is, in the order of its
    loaders: extension modules, then source, then bytecode."""
    for name in files.names(folder):
        rest = name[len(stem) :]
        if (
            name.startswith(stem)
            and _EXTENSION.fullmatch(rest)
            and files.is_file(_join(folder, name))
        ):
            return _join(folder, name), "extension module"
    for suffix, how in ((".py", "module"), (".pyc", "bytecode")):
        path = _join(folder, stem + suffix)
        if files.is_file(path):
            return path, how
    return None


def find_step(files: Files, name: str, locations: Sequence[str]) -> Step:
    """Where `name`'s last part is found along `locations`, as importlib's FileFinder and
    PathFinder find it: the first regular package or module wins; namespace folders count only
    when neither is found anywhere."""
    tail = name.rpartition(".")[2]
    portions: list[str] = []
    for folder in locations:
        below = _join(folder, tail)
        is_dir = files.is_dir(below)
        if is_dir and (init := _module_file(files, below, "__init__")) is not None:
            return Step(name, "package", init[0], (below,))
        found = _module_file(files, folder, tail)
        if found is not None:
            return Step(name, found[1], found[0])
        if is_dir:
            portions.append(below)
    return Step(name, "namespace", None, tuple(portions)) if portions else Step(name, "missing")


def resolve(files: Files, module: str, path: Sequence[str]) -> list[Step]:
    """Each step of importing `module` with sys.path `path`; it ends early where a step is not a
    package (the import would fail there)."""
    steps: list[Step] = []
    parts = module.split(".")
    locations: Sequence[str] = path
    for depth in range(1, len(parts) + 1):
        step = find_step(files, ".".join(parts[:depth]), locations)
        steps.append(step)
        if not step.folders:
            break
        locations = step.folders
    return steps


# -- the static check ---------------------------------------------------------------------------


def module_name(file: str, source_root: str) -> str | None:
    """The dotted name the protected `file` is imported by (None: not importable by a name)."""
    path = PurePosixPath(file)
    if path.suffix != ".py":
        return None
    if source_root and path.is_relative_to(source_root):
        path = path.relative_to(source_root)
    parts = path.with_suffix("").parts
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _rel(path: Path, root: Path) -> str:
    """`path` relative to `root` as the resolver names folders ("" for the root itself)."""
    rel = path.relative_to(root).as_posix()
    return "" if rel == "." else rel


def _pytest_folders(root: Path) -> Iterator[str]:
    """The folders pytest puts first on sys.path: its `pythonpath`, and (its default import mode)
    for each test file and conftest.py the first folder up from it without an __init__.py."""
    config = read_pytest_config(root)
    for entry in config.pythonpath:
        full = Path(os.path.normpath(root / entry))
        if full.is_relative_to(root):
            yield _rel(full, root)
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        dirs[:] = [
            d
            for d in sorted(dirs)
            if not _NOT_COLLECTED.match(d)
            and d != "__pycache__"
            and not os.path.lexists(here / d / "pyvenv.cfg")  # a virtual environment
        ]
        rel = _rel(here, root)
        if any(n == "conftest.py" or config.is_test_file(_join(rel, n)) for n in names):
            base = here
            while base != root and os.path.isfile(base / "__init__.py"):
                base = base.parent
            yield _rel(base, root)


def _differs(now: Step, then: Step | None, last: bool) -> bool:
    """Whether the worktree's step `now` runs another file than the base commit's `then`."""
    if now.file is None or (then is not None and now.file == then.file):
        return False
    if last or then is None:
        return True
    # An `__init__.py` that now runs in the same folder is an edit like any other of the package.
    return not (now.file.endswith(".py") and set(now.folders) <= set(then.folders))


def _shadow_line(file: str, now: Step, then: Step | None, last: bool) -> str:
    if last:
        why = _HOW.get(now.how, "it is imported instead")
    else:
        was = then.file if then is not None else None
        if was is None and then is not None and then.folders:
            was = "the namespace folder " + ", ".join(f"{f}/" for f in then.folders)
        why = f"it is imported as {now.name} instead of {was or 'nothing'}"
    return f"{now.file}: shadows the protected {file} ({why})"


def shadowing_step(file: str, module: str, now: list[Step], then: list[Step]) -> str | None:
    """The line for the first step of importing `module` where the worktree (`now`) runs another
    file than the base commit (`then`), if there is one."""
    for depth, step in enumerate(now):
        before = then[depth] if depth < len(then) else None
        last = step.name == module
        if _differs(step, before, last):
            return _shadow_line(file, step, before, last)
    return None


# -- the dynamic check --------------------------------------------------------------------------

# Run with -c in the worktree, so sys.path[0] is the worktree as for `python -m pytest` there. The
# nonce is read before the project's code runs, so that code cannot print a forged answer; the
# builtins it uses are bound first, so it cannot swap them; os._exit skips the project's atexit
# hooks and threads.
_PROBE = r"""
import sys
nonce = sys.stdin.readline().strip()
import ast, os
from importlib import import_module
spec = ast.literal_eval(sys.argv[1])
put, leave, kind_of, text_of, attr, every = os.write, os._exit, type, repr, getattr, all
PLAIN = (bool, int, float, complex, str, bytes, type(None))
def literal(value):
    kind = kind_of(value)
    if kind in PLAIN:
        return True
    if kind is dict:
        return every(literal(k) and literal(v) for k, v in value.items())
    return kind in (tuple, list, set, frozenset) and every(literal(v) for v in value)
def said(exc):
    try:
        return f"{kind_of(exc).__name__}: {exc}"
    except BaseException:
        return "an exception"
imported, out = {}, {}
for module in spec:
    try:
        imported[module] = import_module(module)
    except BaseException as exc:
        out[module] = {"error": said(exc)}
for module, found in imported.items():
    values = {}
    for name in spec[module]:
        try:
            value = found
            for part in name.split("."):
                value = attr(value, part)
        except AttributeError:
            values[name] = ("missing", "")
            continue
        except BaseException as exc:
            values[name] = ("unreadable", said(exc))
            continue
        try:
            if literal(value):
                values[name] = ("literal", text_of(value))
            else:
                values[name] = ("other", kind_of(value).__name__)
        except BaseException as exc:
            values[name] = ("unreadable", said(exc))
    where = attr(found, "__file__", None)
    out[module] = {"file": where if kind_of(where) is str else None, "values": values}
put(1, ("\nSSW-VALUES " + nonce + " " + text_of(out) + "\n").encode("utf-8", "backslashreplace"))
leave(0)
"""
_ANSWER = "SSW-VALUES "


def probe_command(python: Path, spec: Mapping[str, Sequence[str]], nonce: str) -> str:
    """The shell command that imports each module of `spec` (module -> constant names) and
    prints their values on a line marked with `nonce`."""
    wanted = {module: list(names) for module, names in spec.items()}
    program = f"{shlex.quote(str(python))} -c {shlex.quote(_PROBE)} {shlex.quote(repr(wanted))}"
    return f"exec {program} <<< {shlex.quote(nonce)}"


def probe_answer(output: str, nonce: str) -> dict[str, object] | None:
    """The probe's answer in `output`, or None when it gave none (it failed, or was cut)."""
    mark = f"{_ANSWER}{nonce} "
    line = next((x for x in reversed(output.splitlines()) if x.startswith(mark)), None)
    if line is None:
        return None
    try:
        answer = ast.literal_eval(line.removeprefix(mark))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return answer if isinstance(answer, dict) else None


def _parsed(text: str) -> tuple[bool, object]:
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None  # nan, inf: only their repr is compared


def same_value(a: object, b: object) -> bool:
    """Equal and of the same types throughout: 1, 1.0 and True are three values here."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float | complex):
        return repr(a) == repr(b)  # -0.0 and 0.0 differ, nan is itself
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b


def _base_literals(
    file: str, text: str | None, names: Sequence[str], notes: list[str]
) -> dict[str, object]:
    """Each protected name of `file` with its value at the base commit, for those bound last to a
    literal there (what `check_constants` already refuses is left out)."""
    if text is None:
        return {}
    try:
        bindings = constant_bindings(text)
    except SyntaxError:
        return {}
    out: dict[str, object] = {}
    for name in wanted_names(bindings, names):
        if name not in bindings:
            continue
        shown = bindings[name][-1][1]
        readable, value = _parsed(shown)
        if readable:
            out[name] = value
        else:
            notes.append(
                f"{file}: {name} is computed at the base commit ({clip(shown)}), so its "
                "imported value is not compared"
            )
    return out


def _value_line(
    file: str, name: str, expected: object, got: tuple[str, str], where: str
) -> str | None:
    """The failing line for constant `name` imported as `got` (status, text), or None: same."""
    status, text = got
    was = clip(repr(expected))
    if status == "literal":
        readable, value = _parsed(text)
        if (readable and same_value(value, expected)) or (not readable and text == repr(expected)):
            return None
        return (
            f"{file}: protected constant {name} is imported as {clip(text)} (from {where}), "
            f"not {was} as at the base commit"
        )
    if status == "missing":
        return (
            f"{file}: protected constant {name} is missing where it is imported from "
            f"({where}); it was {was}"
        )
    if status == "other":
        return (
            f"{file}: protected constant {name} is imported as an object of type {clip(text)}, "
            f"not a literal (from {where}); it was {was}"
        )
    return (
        f"{file}: protected constant {name} cannot be read where it is imported from "
        f"({where}: {clip(text)}); it was {was}"
    )


@dataclass
class ProtectionByValue:
    """The protected constants of one gate (`constants`: file -> names) in the worktree at `root`,
    against the base commit's files (`base_paths`) and the protected files' texts there
    (`base_texts`: file -> text, None where it has none). What each check did not cover goes to
    `notes`, for the gate's log."""

    root: Path
    source_root: Path
    base_paths: Collection[str]
    base_texts: Mapping[str, str | None]
    constants: Mapping[str, Sequence[str]]
    notes: list[str] = field(default_factory=list)

    @property
    def _source(self) -> str:
        inside = self.source_root.is_relative_to(self.root)
        return _rel(self.source_root, self.root) if inside else ""

    @cached_property
    def modules(self) -> dict[str, str]:
        """Protected file -> the module name it is imported by, for the files that have one."""
        out: dict[str, str] = {}
        for file in self.constants:
            name = module_name(file, self._source)
            if name is None:
                self.notes.append(f"{file}: no module name imports it: only its text is checked")
            else:
                out[file] = name
        return out

    def shadowing(self) -> list[str]:
        """One line per file the change adds that is imported instead of a protected module."""
        now, then = WorktreeFiles(self.root), CommitFiles(self.base_paths)
        first = list(dict.fromkeys(["", self._source, *_pytest_folders(self.root)]))
        orders = [first] + [[f, *(o for o in first if o != f)] for f in first[1:]]
        problems: list[str] = []
        for file, module in self.modules.items():
            for order in orders:
                line = shadowing_step(
                    file, module, resolve(now, module, order), resolve(then, module, order)
                )
                problems += [line] if line else []
            at_base = resolve(then, module, first)[-1]
            if at_base.name == module and at_base.file not in (file, None):
                self.notes.append(f"{file}: the base commit imports {module} from {at_base.file}")
            stray = str(PurePosixPath(file).with_suffix(".pyc"))
            if now.is_file(stray) and not then.is_file(stray):
                problems.append(
                    f"{stray}: bytecode beside the protected {file} (Python imports the source "
                    "while there is one, and this file once it is gone)"
                )
        return list(dict.fromkeys(problems))

    def imported_values(self, python: Path, run: Callable[[str], GateResult]) -> list[str]:
        """Import the protected modules with `run` (a shell command as the gates run one: their
        environment, the worktree, the sandbox) and `python`; one line per protected constant
        whose value there is not the base commit's."""
        expected = {
            file: _base_literals(file, self.base_texts.get(file), names, self.notes)
            for file, names in self.constants.items()
            if file in self.modules
        }
        spec = {self.modules[f]: list(values) for f, values in expected.items() if values}
        if not spec:
            return []
        nonce = secrets.token_hex(16)
        ran = run(probe_command(python, spec, nonce))
        answer = probe_answer(ran.log, nonce)
        if answer is None:
            tail = (ran.log.strip().splitlines() or [ran.report])[-1]
            self.notes.append(
                f"the protected modules could not be imported to read their values ({clip(tail)})"
                ": only the files were checked"
            )
            return []
        problems: list[str] = []
        for file, values in expected.items():
            module = self.modules[file]
            found = answer.get(module)
            if not values:
                continue
            if isinstance(found, dict):
                problems += self._compare(file, module, values, found)
            else:
                self.notes.append(f"{file}: the probe said nothing of {module}: not compared")
        return problems

    def _where(self, file: object) -> str:
        if not isinstance(file, str):
            return "a module with no file"
        path = Path(file)
        for root in (self.root, self.root.resolve()):
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        return file

    def _compare(
        self, file: str, module: str, expected: Mapping[str, object], found: dict[object, object]
    ) -> list[str]:
        if "error" in found:
            self.notes.append(
                f"{file}: {module} does not import with the gates' Python "
                f"({clip(str(found['error']))}): its values were checked in the file only"
            )
            return []
        where = self._where(found.get("file"))
        got = found.get("values")
        got = got if isinstance(got, dict) else {}
        problems: list[str] = []
        for name, value in expected.items():
            answer = got.get(name)
            pair = answer if isinstance(answer, tuple) and len(answer) == 2 else ("missing", "")
            line = _value_line(file, name, value, (str(pair[0]), str(pair[1])), where)
            problems += [line] if line else []
        if not problems:
            self.notes.append(
                f"{file}: {module} imported from {where}: {', '.join(expected)} "
                "as at the base commit"
            )
        return problems
