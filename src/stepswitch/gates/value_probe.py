"""The dynamic check's probe (protected_values.py): a program the gates' interpreter runs in the
worktree that imports each protected module and prints each constant's repr, marked with a
nonce; `probe_answer` reads that line back and `same_value` compares what it gave."""

from __future__ import annotations

import ast
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

PROBE_TIMEOUT_S = 60.0

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
