"""Which lines of a module run at import (gates/import_time.py): what the call map never places."""

from __future__ import annotations

import textwrap

from stepswitch.gates.import_time import import_time_spans, in_spans

MODULE = textwrap.dedent(
    '''
    import functools

    CODES = {n: ord(n) for n in "abc"}

    def code(name):
        # the body runs on a call
        return CODES[name]

    @functools.lru_cache(
        maxsize=2,
    )
    def cached(
        n,
        m=3,
    ) -> int:
        """A docstring is set at import."""
        return n * m

    class Box:
        size = 3

        def volume(self):
            def inner():
                return 1
            return self.size ** 3 + inner()

    def one(): return 1
    '''
).lstrip("\n")


def _at_import(source: str) -> list[int]:
    spans = import_time_spans(source.encode())
    return [n for n in range(1, source.count("\n") + 2) if in_spans(spans, n)]


def test_module_level_code_class_bodies_and_def_headers_run_at_import_bodies_do_not() -> None:
    lines = MODULE.splitlines()
    ran = {lines[n - 1].strip() for n in _at_import(MODULE)}
    assert {
        "import functools",
        'CODES = {n: ord(n) for n in "abc"}',
        "def code(name):",
        "@functools.lru_cache(",
        "maxsize=2,",
        "m=3,",
        ") -> int:",
        '"""A docstring is set at import."""',
        "class Box:",
        "size = 3",
        "def volume(self):",
        "def one(): return 1",  # a one-line def: its header's line
    } <= ran
    called = {
        "# the body runs on a call",
        "return CODES[name]",
        "return n * m",
        "def inner():",
        "return self.size ** 3 + inner()",
    }
    assert not called & ran


def test_a_file_this_python_cannot_parse_runs_at_import_throughout() -> None:
    assert import_time_spans(b"def f(:\n    pass\n") == ((1, 3),)
