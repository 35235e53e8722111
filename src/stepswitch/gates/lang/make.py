"""Make and just: a repository's `test` target, the gate of last resort, detected only when no
language found a test suite (gates/detect.py). What the target runs is the Makefile's business,
so nothing narrower is sound: the full suite only. Its failure is the end of its output, where
make and the tools it runs put their summaries."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stepswitch.gates.config import SuiteGate
from stepswitch.gates.lang.base import MESSAGE_CHARS, Detected, Detection, FailedTest, Selection
from stepswitch.gates.lang.toolchain import missing_note, on_path
from stepswitch.util.text_files import text_or_empty

LANGUAGE = "Make"
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the order make reads them in
JUSTFILES = ("justfile", "Justfile", ".justfile")
# A rule for `test` (`test:`, `lint test:`, `test::`), never an assignment (`test :=`, `::=`).
_MAKE_TARGET = re.compile(r"^(?:[^\s:=#][^:=#]*\s)?test(?:\s[^:=#]*)?:(?!:?=)", re.M)
# A just recipe: `test:`, `@test:`, `test arg="x":`; not `test := "value"`.
_JUST_RECIPE = re.compile(r"^@?test\b[^:=\n]*(?:=[^:\n]*)?:(?!=)", re.M)


def _found(root: Path) -> tuple[str, str, str] | None:
    """(file, tool, command) of the first Makefile or justfile with a `test` target."""
    for name in MAKEFILES:
        if (root / name).is_file():
            if _MAKE_TARGET.search(text_or_empty(root / name)):
                return name, "make", "make test"
            break  # make reads the first of them only
    for name in JUSTFILES:
        if (root / name).is_file() and _JUST_RECIPE.search(text_or_empty(root / name)):
            return name, "just", "just test"
    return None


def detect(root: Path) -> Detection:
    """`make test` or `just test` when the repository has that target."""
    found = _found(root)
    if found is None:
        return Detection(LANGUAGE)
    file, tool, command = found
    declared = f"{file} has a test target"
    if not on_path(tool):
        return Detection(LANGUAGE, notes=(missing_note(tool, declared, "test gate"),))
    spec = SuiteGate(name="tests", kind="suite", runner="make", command=command)
    return Detection(LANGUAGE, (Detected(spec, f"{declared}: {command}"),))


@dataclass(frozen=True)
class MakeRunner:
    name: str = "make"
    language: str = LANGUAGE

    def full_command(self, command: str, report: Path) -> str:
        return command

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        why = "a make or just target runs what it runs: the full suite only"
        return Selection(None, (), why)

    def failures(self, output: str, report: Path) -> list[FailedTest]:
        """One entry: the target, with the last lines of its output."""
        tail = output.strip()[-MESSAGE_CHARS:]
        if "\n" in tail and len(output.strip()) > MESSAGE_CHARS:
            tail = tail.split("\n", 1)[1]  # whole lines only
        return [FailedTest("test target", None, tail)]


MAKE = MakeRunner()
