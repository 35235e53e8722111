"""Which test files a change can affect, from the repository's own static import graph.

Every `.py` file of the repository is read (virtual environments, `.git`, caches and build output
skipped) and its import statements are parsed with `ast`. A file is known by every module name it
can be imported as: its package path (folders with `__init__.py`), its path from the repository
root, from `src/`, and from pytest's `pythonpath` folders. The reverse of the import graph leads
from the changed files to everything that imports them, directly or through other modules; the
test files among those, the changed test files themselves and the tests beside and below an
affected `conftest.py` are the impacted tests.

What a static graph cannot see (dynamic imports built at run time, data files, plugins, entry
points) is why the full suite always runs after the impacted tests pass: see
docs/decisions/0006-impacted-tests.md.

Speed: only the lines that start an import statement are parsed (a file whose snippets do not
parse is parsed whole), and results are cached per file by modification time and size, so a
repository of a thousand files answers well under a second.
"""

from __future__ import annotations

import ast
import os
import re
import tomllib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Folder names never read, wherever they are.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "__pycache__",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ssw",
        ".eggs",
        "site-packages",
    }
)
# Folder names skipped only at the repository root: elsewhere they can be real packages.
SKIP_TOP_DIRS = frozenset({"build", "dist", "htmlcov"})

_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t]+\w)", re.M)
_DYNAMIC = re.compile(rb"""(?:import_module|__import__)\(\s*["']([\w.]+)["']""")


def is_test_file(rel_path: str) -> bool:
    """pytest's default file names: test_*.py and *_test.py."""
    name = PurePosixPath(rel_path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def python_files(root: Path) -> list[str]:
    """Every .py file under root as a sorted relative posix path, skipping environments and
    caches (any folder holding a `pyvenv.cfg` counts as an environment)."""
    found: list[str] = []
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if prefix and any(e.name == "pyvenv.cfg" for e in entries):
            continue
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name in SKIP_DIRS or name.endswith(".egg-info"):
                        continue
                    if not prefix and name in SKIP_TOP_DIRS:
                        continue
                    stack.append((Path(entry.path), f"{prefix}{name}/"))
                elif name.endswith(".py") and entry.is_file():
                    found.append(prefix + name)
            except OSError:
                continue
    return sorted(found)


@dataclass(frozen=True)
class _Parsed:
    # Absolute imports as written (level 0), and relative ones as (level, module or "", names).
    absolute: frozenset[str]
    relative: tuple[tuple[int, str, tuple[str, ...]], ...]


_CACHE: dict[str, tuple[int, int, _Parsed]] = {}


def _imports_of(tree: ast.AST) -> _Parsed:
    absolute: set[str] = set()
    relative: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            absolute.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names if alias.name != "*")
            if node.level == 0 and node.module:
                absolute.add(node.module)
                absolute.update(f"{node.module}.{n}" for n in names)
            elif node.level > 0:
                relative.append((node.level, node.module or "", names))
    return _Parsed(frozenset(absolute), tuple(relative))


def _statement_end(data: bytes, start: int) -> int:
    """End of the import statement starting at `start`: one line, or until its parentheses close,
    or through backslash continuations."""
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    line = data[start:end]
    if b"(" in line and b")" not in line:
        close = data.find(b")", end)
        return len(data) if close < 0 else close + 1
    while line.rstrip().endswith(b"\\") and end < len(data):
        nxt = data.find(b"\n", end + 1)
        nxt = len(data) if nxt < 0 else nxt
        line = data[end + 1 : nxt]
        end = nxt
    return end


def _parse_source(data: bytes) -> _Parsed:
    """Parse the import statements of one file; fall back to the whole file if a snippet fails."""
    absolute: set[str] = set()
    relative: list[tuple[int, str, tuple[str, ...]]] = []
    try:
        for match in _IMPORT_LINE.finditer(data):
            snippet = data[match.start() : _statement_end(data, match.start())].strip()
            parsed = _imports_of(ast.parse(snippet))
            absolute |= parsed.absolute
            relative.extend(parsed.relative)
    except (SyntaxError, ValueError):
        try:
            return _with_dynamic(_imports_of(ast.parse(data)), data)
        except (SyntaxError, ValueError):
            pass  # a file that does not parse still counts, with the imports its snippets showed
    return _with_dynamic(_Parsed(frozenset(absolute), tuple(relative)), data)


def _with_dynamic(parsed: _Parsed, data: bytes) -> _Parsed:
    # importlib.import_module("pkg.mod") and __import__("pkg.mod") with a literal name.
    found = {m.group(1).decode() for m in _DYNAMIC.finditer(data)}
    return _Parsed(parsed.absolute | found, parsed.relative) if found else parsed


def _parse_file(path: Path) -> _Parsed:
    try:
        stat = path.stat()
    except OSError:
        return _Parsed(frozenset(), ())
    key = str(path)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
        return cached[2]
    try:
        data = path.read_bytes()
    except OSError:
        return _Parsed(frozenset(), ())
    parsed = _parse_source(data)
    _CACHE[key] = (stat.st_mtime_ns, stat.st_size, parsed)
    return parsed


def _pytest_pythonpath(root: Path) -> list[str]:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    options = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
    value = options.get("pythonpath", []) if isinstance(options, dict) else []
    entries = value.split() if isinstance(value, str) else value
    if not isinstance(entries, list):
        return []
    out = []
    for entry in entries:
        if isinstance(entry, str):
            clean = PurePosixPath(entry.strip()).as_posix()
            out.append("" if clean in (".", "") else clean.strip("/") + "/")
    return out


def _dotted(parts: Iterable[str]) -> str | None:
    parts = list(parts)
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


class ImportGraph:
    """The repository's modules, what each file imports, and who imports each module name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = python_files(root)
        self._packages = {
            f[: -len("/__init__.py")] for f in self.files if f.endswith("/__init__.py")
        }
        self._roots = ["", "src/", *_pytest_pythonpath(root)]
        self.importers: dict[str, set[str]] = {}
        for rel in self.files:
            for name in self.imported_names(rel):
                self.importers.setdefault(name, set()).add(rel)

    def module_names(self, rel: str) -> set[str]:
        """Every dotted name `rel` can be imported as (works for deleted files too)."""
        path = PurePosixPath(rel)
        if path.suffix != ".py":
            return set()
        parts = [*path.parent.parts, path.stem] if path.stem != "__init__" else [*path.parent.parts]
        names: set[str] = set()
        # Its package path: climb while the folder holds an __init__.py.
        folder = path.parent
        package: list[str] = [] if path.stem == "__init__" else [path.stem]
        while folder.as_posix() != "." and folder.as_posix() in self._packages:
            package.insert(0, folder.name)
            folder = folder.parent
        if not package:
            package = [path.parent.name]  # a deleted __init__.py: the listing no longer has it
        dotted = _dotted(package)
        if dotted:
            names.add(dotted)
        for base in self._roots:
            if base and not rel.startswith(base):
                continue
            sub = parts[len(PurePosixPath(base).parts) if base else 0 :]
            dotted = _dotted(sub)
            if dotted:
                names.add(dotted)
        return names

    def imported_names(self, rel: str) -> set[str]:
        """The absolute module names `rel` imports, with every parent package."""
        parsed = _parse_file(self.root / rel)
        wanted = set(parsed.absolute)
        if parsed.relative:
            is_init = PurePosixPath(rel).stem == "__init__"
            for own in self.module_names(rel):
                package = own.split(".") if is_init else own.split(".")[:-1]
                for level, module, names in parsed.relative:
                    if level - 1 > len(package):
                        continue
                    base = package[: len(package) - (level - 1)]
                    target = ".".join([*base, *([module] if module else [])])
                    if target:
                        wanted.add(target)
                        wanted.update(f"{target}.{n}" for n in names)
        out: set[str] = set()
        for name in wanted:
            pieces = name.split(".")
            out.update(".".join(pieces[: i + 1]) for i in range(len(pieces)))
        return out

    def affected(self, changed: Iterable[str]) -> set[str]:
        """The changed .py files and every file that imports one of them, transitively."""
        return set(self.distances(changed))

    def distances(self, changed: Iterable[str]) -> dict[str, int]:
        """Each affected file and how many import hops it is from a changed file (0: changed)."""
        start = {c for c in changed if c.endswith(".py")}
        seen = dict.fromkeys(start, 0)
        queue = deque(start)
        while queue:
            current = queue.popleft()
            for name in self.module_names(current):
                for importer in self.importers.get(name, ()):
                    if importer not in seen:
                        seen[importer] = seen[current] + 1
                        queue.append(importer)
        return seen

    def impacted_tiers(self, changed: Iterable[str]) -> tuple[list[str], list[str]]:
        """(nearest, wider): the changed test files and the tests that import a changed module
        directly (or sit under a conftest.py that changed or does), then the other impacted
        tests, each list sorted. The nearest usually hold the failure, so they run first."""
        distance = self.distances(changed)
        existing = set(self.files)
        nearest: set[str] = set()
        wider: set[str] = set()
        for rel, hops in distance.items():
            if rel in existing and is_test_file(rel):
                (nearest if hops <= 1 else wider).add(rel)
        for conftest, hops in distance.items():
            if PurePosixPath(conftest).name != "conftest.py":
                continue
            folder = PurePosixPath(conftest).parent.as_posix()
            prefix = "" if folder == "." else folder + "/"
            below = {f for f in self.files if f.startswith(prefix) and is_test_file(f)}
            (nearest if hops <= 1 else wider).update(below)
        return sorted(nearest), sorted(wider - nearest)

    def impacted_tests(self, changed: Iterable[str]) -> list[str]:
        nearest, wider = self.impacted_tiers(changed)
        return sorted([*nearest, *wider])

    def test_files(self) -> list[str]:
        return [f for f in self.files if is_test_file(f)]


def _normalise(root: Path, path: str) -> str | None:
    given = Path(path)
    if given.is_absolute():
        try:
            given = given.resolve().relative_to(root.resolve())
        except ValueError:
            return None
    clean = PurePosixPath(given.as_posix())
    if ".." in clean.parts:
        return None
    return clean.as_posix().removeprefix("./")


def impacted_tiers(root: Path, changed: Iterable[str]) -> tuple[list[str], list[str], int]:
    """(nearest, wider, number of test files in the repository); see ImportGraph.impacted_tiers."""
    rel = [r for r in (_normalise(root, c) for c in changed) if r]
    if not any(r.endswith(".py") for r in rel):
        return [], [], 0
    graph = ImportGraph(root)
    nearest, wider = graph.impacted_tiers(rel)
    return nearest, wider, len(graph.test_files())


def impacted_tests(root: Path, changed: Iterable[str]) -> list[str]:
    """Test files (relative posix paths, sorted) that import a changed module directly or through
    the repository's own modules, the changed test files that still exist, and the tests beside
    and below an affected conftest.py. Empty when nothing Python changed."""
    rel = [r for r in (_normalise(root, c) for c in changed) if r]
    if not any(r.endswith(".py") for r in rel):
        return []
    return ImportGraph(root).impacted_tests(rel)
