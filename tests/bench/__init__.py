"""Tests of the bench: fixture tasks are written into tmp_path by `write_task`."""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

BUGGY = """
def add(a, b):
    return a - b


def double(x):
    return 2 * x
"""
FIXED = BUGGY.replace("a - b", "a + b")

TASK_TOML = """
id = "{name}"
kind = "bugfix"

[tests]
command = "python -m pytest -q -p no:cacheprovider .ssw_hidden"
per_test_timeout_s = 5
timeout_s = 60
"""

FILES = {
    "instruction.md": "add(2, 3) returns -1; it should return 5.\n",
    "repo/pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "repo/calc.py": BUGGY,
    "repo/tests/test_calc.py": """
        from calc import double


        def test_double():
            assert double(2) == 4
    """,
    "tests/test_hidden.py": """
        from calc import add


        def test_add():
            assert add(2, 3) == 5
    """,
}


def patch_of(path: str, old: str, new: str) -> str:
    """A unified diff `git apply` takes, changing `path` from `old` to `new` (both dedented)."""
    before = textwrap.dedent(old).lstrip("\n").splitlines(keepends=True)
    after = textwrap.dedent(new).lstrip("\n").splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, f"a/{path}", f"b/{path}"))


def write_task(
    root: Path, name: str = "task", files: dict[str, str | bytes | None] | None = None
) -> Path:
    """A valid task folder at root/suite/name, with `files` (path -> text, bytes, or None to
    leave the file out) written over the defaults."""
    folder = root / "suite" / name
    chosen: dict[str, str | bytes | None] = {
        "task.toml": TASK_TOML.format(name=name),
        **FILES,
        "solution/solution.patch": patch_of("calc.py", BUGGY, FIXED),
        **(files or {}),
    }
    for rel, content in chosen.items():
        if content is None:
            continue
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return folder
