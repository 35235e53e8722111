"""The packages of a Go module and the packages each one's tests reach, read from go.mod and the
import declarations of its .go files as they are in the tree (never the go tool: `impacted` runs
outside the sandbox). Every file of a folder counts, whatever its build constraints: a file left
out of a build can only add packages to what a test reaches, never hide one.

A package's tests reach the package, what its files and test files import, and what those import
in turn, transitively; only the module's own packages matter, since a change is to them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from stepswitch.util.text_files import text_or_empty

GO_MOD = "go.mod"
_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.M)
_DECLARATION = re.compile(r"^(?:func|type|var|const)\b", re.M)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_IMPORT_BLOCK = re.compile(r"\bimport\s*\(([^)]*)\)")
_IMPORT_ONE = re.compile(r"\bimport\s+(?:[\w.]+\s+)?[\"`]([^\"`]+)[\"`]")
_SPEC = re.compile(r"(?:[\w.]+\s+)?[\"`]([^\"`]+)[\"`]")


def module_path(root: Path) -> str | None:
    """The module path go.mod declares, or None (no go.mod, or none declared)."""
    try:
        found = _MODULE.search((root / GO_MOD).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return found.group(1) if found else None


def join_path(module: str, folder: str) -> str:
    """The import path of the package in `folder` (relative to the module root)."""
    return f"{module}/{folder}" if folder else module


def _ignored(name: str) -> bool:
    """Folders and files the go tool leaves out of `./...` and of a package."""
    return name.startswith((".", "_")) or name in ("testdata", "vendor")


def imports_of(text: str) -> set[str]:
    """The import paths a Go file's import declarations name."""
    head = _DECLARATION.split(text, maxsplit=1)[0]
    head = _COMMENT.sub("", head)
    found = {m.group(1) for m in _IMPORT_ONE.finditer(head)}
    for block in _IMPORT_BLOCK.finditer(head):
        found |= {m.group(1) for m in _SPEC.finditer(block.group(1))}
    return found


@dataclass(frozen=True)
class Package:
    folder: str  # relative to the module root, posix; "" for the root's own package
    imports: frozenset[str]  # of every file, test files included
    code_imports: frozenset[str]  # of the files a package that imports it compiles
    has_tests: bool


@dataclass(frozen=True)
class Module:
    path: str
    packages: dict[str, Package]  # by import path
    nested: tuple[str, ...]  # folders holding a go.mod of their own: other modules

    def import_path(self, folder: str) -> str:
        return join_path(self.path, folder)

    def package_of(self, changed: str) -> str | None:
        """The import path of the package a changed file belongs to: a .go file's folder's (a
        package it deletes included), any other file's nearest enclosing package (testdata
        and embedded files); None when it is in another module or in no package."""
        if any(changed == n or changed.startswith(n + "/") for n in self.nested):
            return None
        pure = PurePosixPath(changed)
        folders = [p.as_posix() for p in pure.parents]
        folders = ["" if f == "." else f for f in folders]
        if pure.suffix == ".go" and not any(_ignored(part) for part in pure.parts[:-1]):
            return self.import_path(folders[0])
        by_folder = {p.folder: path for path, p in self.packages.items()}
        for folder in folders:
            if folder in by_folder:
                return by_folder[folder]
        return None

    def reaching(self, changed: set[str]) -> list[str]:
        """The packages with tests whose tests reach one of `changed` (import paths)."""
        out: list[str] = []
        for path, package in self.packages.items():
            if not package.has_tests:
                continue
            reached = {path}
            todo = list(package.imports)
            while todo:
                name = todo.pop()
                if name in reached:
                    continue
                reached.add(name)
                if name in self.packages:
                    todo += self.packages[name].code_imports
            if reached & changed:
                out.append(path)
        return sorted(out)


def read_module(root: Path) -> Module | None:
    """The module at root and its packages; None without a go.mod declaring a module."""
    path = module_path(root)
    if path is None:
        return None
    packages: dict[str, Package] = {}
    nested: list[str] = []
    stack = [(str(root), "")]
    while stack:
        folder, rel = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if rel and any(e.name == GO_MOD for e in entries):
            nested.append(rel)
            continue
        imports: set[str] = set()
        code: set[str] = set()
        files = tests = 0
        for entry in entries:
            if _ignored(entry.name):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, f"{rel}/{entry.name}" if rel else entry.name))
            elif entry.name.endswith(".go") and entry.is_file():
                found = imports_of(text_or_empty(entry.path))
                imports |= found
                files += 1
                if entry.name.endswith("_test.go"):
                    tests += 1
                else:
                    code |= found
        if files:
            packages[join_path(path, rel)] = Package(
                rel, frozenset(imports), frozenset(code), tests > 0
            )
    return Module(path, packages, tuple(sorted(nested)))
