"""Test files and test ids as pytest names them, for a task's visible and hidden tests: which
files are test modules, whether a start has any, whether a command runs pytest, and a pytest node
id as its JUnit report names the test."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def is_test_module(rel: Path) -> bool:
    """A file pytest collects tests from by default: test_*.py or *_test.py."""
    name = rel.name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def has_tests(repo: Path) -> bool:
    """Whether a start holds a test module of its own (anywhere but a hidden or git folder)."""
    for path in repo.rglob("*.py"):
        rel = path.relative_to(repo)
        if is_test_module(rel) and not any(p.startswith(".") for p in rel.parts[:-1]):
            return True
    return False


def runs_pytest(argv: Sequence[str]) -> bool:
    """Whether a command runs pytest: a word naming it among its first three."""
    return any(Path(arg).name.startswith("pytest") for arg in argv[:3])


def junit_name(node: str) -> str:
    """A pytest node id (`tests/test_x.py::TestA::test_b[1]`) as pytest's JUnit report names the
    test (`tests.test_x.TestA::test_b[1]`), the form a verdict's failing ids take; a parameter is
    kept whole, whatever it holds (`::`, `/`), as pytest's junitxml keeps it."""
    address, bracket, params = node.partition("[")
    path, _, rest = address.partition("::")
    parts = rest.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return f"{'.'.join([module, *parts[:-1]])}::{parts[-1]}{bracket}{params}"
