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

import os
import re
import secrets
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

from stepswitch.gates.import_resolver import CommitFiles, Step, WorktreeFiles, _join, resolve
from stepswitch.gates.protected import clip, constant_bindings, wanted_names
from stepswitch.gates.pytest_config import read_pytest_config
from stepswitch.gates.runner import GateResult
from stepswitch.gates.value_probe import _parsed, probe_answer, probe_command, same_value

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

# -- the static check (the resolver: import_resolver.py) -----------------------------------------


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


# -- the dynamic check (the probe: value_probe.py) -----------------------------------------------


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
