"""Protected constants and paths, checked from the diff against the run's base commit.

A protected constant is a name bound at the top level of a module (`G = 6.674e-11`,
`C: float = 299_792_458.0`, `A, B = 1, 2`, `X += 1`) or in a top-level class body (`Units.EV`).
Its value is the expression assigned to it, compared as an `ast.dump` so formatting does not count
(`1e3` and `1000.0` are the same; `1000` and `1000.0` are not). Any change or removal fails and the
report names the constant, the file and old -> new. What this does not see: a value changed
through the names it is computed from in another module, a module imported instead of the file,
or a value rebound at import: `gates.protected_values` checks the value the code imports (ADR
0022). Monkeypatching while the tests run is seen by neither.

A protected path is a glob (a folder protects everything below it); any change to a matching
file fails, even one made by a shell command rather than the agent's write tools: an edit, a
deletion, a rename either way, a mode change, a symbolic link (`gates.tree_diff`, which compares
the files themselves with the base commit).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from stepswitch.gates.runner import GateResult
from stepswitch.util.globs import glob_regex
from stepswitch.util.python_ast import parse_python

ALL_CONSTANTS = "*"  # every UPPER_CASE name at module level
_UPPER = re.compile(r"[A-Z][A-Z0-9_]*\Z")
_SHOWN = 80  # characters of a value shown in a report

Binding = tuple[str, str]  # (ast.dump of the value, its source for reports)


def _bind(out: dict[str, list[Binding]], name: str, value: ast.expr, op: str = "=") -> None:
    dump = ast.dump(value) if op == "=" else f"{op} {ast.dump(value)}"
    shown = ast.unparse(value) if op == "=" else f"{op} {ast.unparse(value)}"
    out.setdefault(name, []).append((dump, shown))


def _bind_target(
    out: dict[str, list[Binding]], target: ast.expr, value: ast.expr, prefix: str
) -> None:
    if isinstance(target, ast.Name):
        _bind(out, prefix + target.id, value)
    elif isinstance(target, ast.Tuple | ast.List):
        if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
            for sub_target, sub_value in zip(target.elts, value.elts, strict=True):
                _bind_target(out, sub_target, sub_value, prefix)
        else:  # `A, B = compute()`: each name's value is "item i of that expression"
            for index, sub_target in enumerate(target.elts):
                item = ast.Subscript(value=value, slice=ast.Constant(index), ctx=ast.Load())
                _bind_target(out, sub_target, item, prefix)


def _collect(body: list[ast.stmt], out: dict[str, list[Binding]], prefix: str) -> None:
    for node in body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind_target(out, target, node.value, prefix)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            _bind_target(out, node.target, node.value, prefix)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            op = type(node.op).__name__
            _bind(out, prefix + node.target.id, node.value, op)
        elif isinstance(node, ast.ClassDef) and not prefix:
            _collect(node.body, out, f"{node.name}.")


def constant_bindings(source: str) -> dict[str, list[Binding]]:
    """Every top-level (and top-level class) name with the values bound to it, in order.
    Raises SyntaxError for text that does not parse."""
    out: dict[str, list[Binding]] = {}
    _collect(parse_python(source).body, out, "")
    return out


def clip(text: str) -> str:
    """`text` cut to the characters of a value a report shows."""
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _shown(bindings: list[Binding]) -> str:
    return clip("; ".join(shown for _, shown in bindings))


def wanted_names(old: Mapping[str, object], names: Sequence[str]) -> list[str]:
    """The names a gate's `constants` entry protects, `*` spelled out from the base commit's
    bindings `old` (its UPPER_CASE names); names the base commit lacks are kept."""
    wanted = list(dict.fromkeys(names))
    if ALL_CONSTANTS in wanted:
        wanted.remove(ALL_CONSTANTS)
        wanted += [n for n in old if _UPPER.match(n) and n not in wanted]
    return wanted


def check_constants(
    file: str, old_text: str | None, new_text: str | None, names: Sequence[str]
) -> list[str]:
    """One line per protected constant of `file` that an edit changed or removed (empty: none).
    `old_text` is the file at the base commit, `new_text` now; None means the file is absent."""
    if old_text is None:
        return [f"{file}: not in the base commit, so its constants cannot be checked"]
    try:
        old = constant_bindings(old_text)
    except SyntaxError as exc:
        return [f"{file}: does not parse at the base commit (line {exc.lineno}: {exc.msg})"]
    wanted = wanted_names(old, names)
    problems = [
        f"{file}: {name} is not assigned at the top level at the base commit; "
        "check the gate's `constants`"
        for name in wanted
        if name not in old
    ]
    wanted = [n for n in wanted if n in old]
    if new_text is None:
        return problems + [
            f"{file}: deleted, removing protected constant {name} (was {_shown(old[name])})"
            for name in wanted
        ]
    try:
        new = constant_bindings(new_text)
    except SyntaxError as exc:
        return [
            *problems,
            f"{file}: does not parse (line {exc.lineno}: {exc.msg}); "
            f"cannot check protected constants {', '.join(wanted)}",
        ]
    for name in wanted:
        before, after = old[name], new.get(name)
        if after is None:
            problems.append(f"{file}: protected constant {name} removed (was {_shown(before)})")
        elif [d for d, _ in before] != [d for d, _ in after]:
            problems.append(
                f"{file}: protected constant {name} changed: {_shown(before)} -> {_shown(after)}"
            )
    return problems


def matches_protected(path: str, patterns: Iterable[str]) -> str | None:
    """The pattern that protects `path` (a pattern naming a folder protects what is below)."""
    candidates = [path, *(p.as_posix() for p in PurePosixPath(path).parents if str(p) != ".")]
    for pattern in patterns:
        regex = glob_regex(pattern.strip().removeprefix("./").strip("/"))
        if any(regex.match(c) for c in candidates):
            return pattern
    return None


PROTECTED_FIX = "Undo these changes: the task must not change protected constants or files."


def protected_verdict(
    name: str,
    problems: list[str],
    duration_s: float,
    what: str = "protected values or files changed",
    fix: str = PROTECTED_FIX,
    notes: Sequence[str] = (),
) -> GateResult:
    """The verdict of a protected check; `notes` (what was checked how) go to its log only."""
    said = "".join(f"\n{note}" for note in notes)
    if not problems:
        report = f"{name}: passed"
        return GateResult(name, True, duration_s, report, report + said)
    report = f"{name}: failed: {what}\n" + "\n".join(problems)
    return GateResult(name, False, duration_s, f"{report}\n{fix}", report + said)
