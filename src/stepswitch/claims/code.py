"""The code that computes and judges a claim, by its sha256: the modules of the claim's metrics
and every stepswitch module they import (followed to the end), and the modules that judge the
values against the bounds. Recorded in the evidence at proving; `ssw prove --check` says which
changed since, and `ssw prove` says a claim was proved again by other code (issue 44)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import stepswitch
from stepswitch.util.hashing import sha256_bytes
from stepswitch.util.python_ast import parse_python

PACKAGE = Path(stepswitch.__file__).resolve().parent
# What judges every claim: the bounds, the verdict, the refusals of evidence, what it may say.
JUDGES = (
    "stepswitch.claims.numbers",
    "stepswitch.claims.refusals",
    "stepswitch.claims.scope",
    "stepswitch.claims.prove",
)


@cache
def module_file(name: str) -> Path | None:
    """The file of stepswitch module `name` (a package's __init__.py); None when there is none."""
    parts = name.split(".")
    if parts[0] != "stepswitch":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@dataclass(frozen=True)
class _Module:
    rel: str  # stepswitch/<path>
    sha256: str
    imports: frozenset[str]  # the stepswitch modules its text imports (functions included)


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of `tree`, at any depth: an import is a statement, and statements sit
    only in statement lists (bodies, `else` and `finally` blocks, handlers, match cases), never
    inside an expression, so the expressions (most of a module's nodes) are not walked."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.stmt):
                        todo.append(item)
                    elif isinstance(item, (ast.ExceptHandler, ast.match_case)):
                        todo.extend(item.body)


@cache
def _module(name: str) -> _Module | None:
    """Module `name` read once per process: its hash and what it imports."""
    path = module_file(name)
    if path is None:
        return None
    data = path.read_bytes()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(parse_python(data, filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # a submodule, maybe
    imports = frozenset(m for m in found if module_file(m) is not None)
    rel = path.relative_to(PACKAGE.parent).as_posix()
    return _Module(rel, sha256_bytes(data), imports)


def closure(names: Iterable[str]) -> set[str]:
    """`names` and every stepswitch module they import, followed to the end."""
    seen: set[str] = set()
    todo = [n for n in names if module_file(n) is not None]
    while todo:
        name = todo.pop()
        module = _module(name)
        if name not in seen and module is not None:
            seen.add(name)
            todo.extend(module.imports - seen)
    return seen


def code_hashes(metric_modules: Iterable[str]) -> dict[str, str]:
    """`stepswitch/<path>` -> sha256 of each module that computes (the metrics, followed) and
    judges (JUDGES, as they are) a claim."""
    modules = [_module(name) for name in closure(metric_modules) | set(JUDGES)]
    return dict(sorted((m.rel, m.sha256) for m in modules if m is not None))


def changed_code(stored: dict[str, str], now: dict[str, str]) -> list[str]:
    """The modules whose code differs between two records of it (added, gone or edited)."""
    return sorted(p for p in {*stored, *now} if stored.get(p) != now.get(p))
