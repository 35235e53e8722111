"""Which test files of a Node package a change can reach: each test file's static imports (ES
modules' `import ... from`, `export ... from`, `import("...")`; CommonJS's `require("...")`),
followed through the package's own files by relative path.

Only relative specifiers are resolved ("./math.js", "../lib", with node's and TypeScript's
extensions and `index` files); a bare package import ("lodash", "node:fs") is left out, as the
change cannot be in it. Anything this cannot follow soundly (an `import(name)` or
`require(name)` of a computed name, a relative import that names no file, a `#subpath` import)
makes the selection unsound: the caller then runs the full suite alone, and says why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

SOURCE_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
# What a relative specifier may leave out, in the order they are tried.
_RESOLVED_SUFFIXES = (*SOURCE_SUFFIXES, ".json", ".node")
# TypeScript's ESM convention: "./math.js" in the source names ./math.ts.
_TS_FOR_JS = {".js": (".ts", ".tsx"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}
_SKIPPED_DIRS = frozenset({"node_modules", "coverage", "dist", "build"})
MAX_FILES = 5000  # past this many source files the graph is not built: the full suite decides

_FROM = re.compile(r"""\bfrom\s*(['"])(?P<spec>[^'"\n]+)\1""")
_BARE_IMPORT = re.compile(r"""(?<![\w.$])import\s*(['"])(?P<spec>[^'"\n]+)\1""")
_CALL = re.compile(r"""(?<![\w.$])(?:require|import)\s*\(\s*(?P<arg>[^)\s][^)]*?)?\s*\)""")
_LITERAL = re.compile(r"""(['"])(?P<spec>[^'"\n]+)\1\Z|`(?P<plain>[^`$\n]+)`\Z""")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"^\s*//.*$", re.M)


class Unsound(Exception):
    """The import graph cannot be followed: the message says where and why."""


def specifiers(text: str, where: str) -> list[str]:
    """The module specifiers `text` imports or requires. Raises Unsound for one it computes."""
    text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))
    found = [m["spec"] for m in _FROM.finditer(text)]
    found += [m["spec"] for m in _BARE_IMPORT.finditer(text)]
    for call in _CALL.finditer(text):
        argument = (call["arg"] or "").strip()
        literal = _LITERAL.match(argument)
        if literal is None:
            raise Unsound(f"{where} imports a computed name ({call[0][:60]})")
        found.append(literal["spec"] or literal["plain"])
    return found


def resolve(root: Path, importer: Path, spec: str) -> Path | None:
    """The file a specifier of `importer` names; None for a bare package (or a builtin).
    Raises Unsound for a relative one that names no file of the package, or a `#subpath`."""
    if spec.startswith("#") or spec.startswith("/") or spec.startswith("file:"):
        raise Unsound(f"{_rel(root, importer)} imports {spec!r}, which is not a relative path")
    if not (spec.startswith("./") or spec.startswith("../") or spec in (".", "..")):
        return None  # a package, or node's own module
    base = Path(os.path.normpath(importer.parent / spec.split("?", 1)[0]))
    candidates = [base, *(base.with_name(base.name + s) for s in _RESOLVED_SUFFIXES)]
    candidates += [base.with_suffix(s) for s in _TS_FOR_JS.get(base.suffix, ())]
    candidates += [base / f"index{s}" for s in _RESOLVED_SUFFIXES]
    for candidate in candidates:
        if candidate.is_file():
            if not candidate.resolve().is_relative_to(root.resolve()):
                raise Unsound(f"{_rel(root, importer)} imports {spec!r}, outside the package")
            return candidate
    raise Unsound(f"{_rel(root, importer)} imports {spec!r}, which names no file")


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


@dataclass
class ImportGraph:
    """The package's own files each file imports, read once each."""

    root: Path
    _edges: dict[Path, tuple[Path, ...]] = field(default_factory=dict)

    def imports(self, path: Path) -> tuple[Path, ...]:
        """The package's files `path` imports directly. Raises Unsound."""
        if path in self._edges:
            return self._edges[path]
        found: list[Path] = []
        if path.suffix in SOURCE_SUFFIXES:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise Unsound(f"{_rel(self.root, path)} cannot be read: {exc}") from exc
            where = _rel(self.root, path)
            for spec in specifiers(text, where):
                target = resolve(self.root, path, spec)
                if target is not None:
                    found.append(target)
        self._edges[path] = tuple(dict.fromkeys(found))
        if len(self._edges) > MAX_FILES:
            raise Unsound(f"the tests reach more than {MAX_FILES} files")
        return self._edges[path]

    def reaches(self, start: Path, targets: set[Path]) -> bool:
        """Whether `start`, or a file it imports directly or through others, is in `targets`.
        Raises Unsound."""
        seen: set[Path] = set()
        todo = [start]
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            if path in targets:
                return True
            seen.add(path)
            todo += self.imports(path)
        return False


def reaching(root: Path, tests: Sequence[str], changed: Iterable[str]) -> list[str]:
    """The test files (relative to `root`) whose import graph reaches a changed file, in
    `tests`' order. Raises Unsound when a graph cannot be followed."""
    graph = ImportGraph(root)
    targets = {(root / c).absolute() for c in changed}
    targets = {Path(os.path.normpath(t)) for t in targets}
    return [t for t in tests if graph.reaches(Path(os.path.normpath(root / t)), targets)]


def walk(root: Path, folder: Path, recursive: bool = True) -> list[str]:
    """The files under `folder` (relative to `root`, sorted), without node_modules, build
    output or hidden folders."""
    out: list[str] = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        if not recursive:
            dirs[:] = []
        out += [(Path(current) / f).relative_to(root).as_posix() for f in files]
    return sorted(out)


def is_node_test_file(rel: str) -> bool:
    """Whether node's own `--test` runs `rel` when it searches on its own (node 20's names:
    files under a `test` folder, `test.js`, `test-*.js`, `*.test.js`, `*-test.js`,
    `*_test.js`; .cjs and .mjs alike)."""
    path = PurePosixPath(rel)
    if path.suffix not in (".js", ".cjs", ".mjs"):
        return False
    stem = path.stem
    return (
        "test" in path.parts[:-1]
        or stem == "test"
        or stem.startswith("test-")
        or stem.endswith((".test", "-test", "_test"))
    )


def test_files(root: Path, paths: Sequence[str], recursive: bool = True) -> list[str]:
    """The test files the runner's positional `paths` name (files, folders, globs), relative to
    `root`; with none, what node's `--test` finds on its own. Raises Unsound for a path that is
    not in the package."""
    if not paths:
        return [f for f in walk(root, root) if is_node_test_file(f)]
    found: list[str] = []
    for given in paths:
        if any(c in given for c in "*?[{"):
            if "{" in given:
                raise Unsound(f"the test path {given!r} is a brace pattern this does not expand")
            hits = sorted(p for p in root.glob(given) if p.is_file())
            found += [p.relative_to(root).as_posix() for p in hits]
            continue
        path = root / given
        if path.is_dir():
            found += [f for f in walk(root, path, recursive) if PurePosixPath(f).suffix in _JS]
        elif path.is_file():
            found.append(PurePosixPath(os.path.normpath(given)).as_posix())
        else:
            raise Unsound(f"the test path {given!r} names no file of the package")
    return list(dict.fromkeys(found))


_JS = frozenset(SOURCE_SUFFIXES)
