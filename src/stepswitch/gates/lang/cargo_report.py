"""The failing tests of a `cargo test` run, read from libtest's output: each `---- NAME stdout
----` block (the test's output and its panic: the message, and the file from the panic's
location), then the `failures:` list for any test without a block. A crate that does not
compile is one entry naming the crate, with the compiler's first error."""

from __future__ import annotations

import re

from stepswitch.gates.lang.base import MESSAGE_CHARS, FailedTest

_BLOCK = re.compile(r"^---- (.+) stdout ----$")
# Rust 1.73 on: "thread 'tests::adds' (123) panicked at src/lib.rs:9:9:" then the message;
# before: "thread 'tests::adds' panicked at 'message', src/lib.rs:9:9".
_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at (.*)$")
_LOCATION = re.compile(r"([^\s'\"]+\.rs):(\d+):\d+:?$")
_LIST_ENTRY = re.compile(r"^    (\S.*)$")
# "     Running unittests src/lib.rs (target/debug/deps/core_math-0f3a...)": the binary's name.
_RUNNING = re.compile(r"^\s*Running .*[/\\(]([A-Za-z0-9_]+)-[0-9a-f]+(?:\.exe)?\)$")
_DOC_TESTS = re.compile(r"^\s*Doc-tests (\S+)$")
_STARTED = re.compile(r"^running (\d+) tests?$", re.M)
_COMPILE = re.compile(r"^error: could not compile `([^`]+)`")
_ERROR = re.compile(r"^error(\[E\d+\])?: ")
_ARROW = re.compile(r"^\s*--> ([^\s:]+\.rs):\d+:\d+")
# Lines of a panic's block that say nothing about the failure.
_NOISE = ("note: run with `RUST_BACKTRACE", "note: Some details are omitted")


def _file_of(location: str) -> str | None:
    """The repository-relative file of a panic's location; None for the standard library's and
    any other absolute path."""
    found = _LOCATION.search(location)
    if found is None or found.group(1).startswith("/"):
        return None
    return found.group(1).removeprefix("./")


def _read_block(name: str, lines: list[str]) -> FailedTest:
    """One test's block: the panic's message first (what the test printed before it after), the
    file from the panic's location."""
    file: str | None = None
    printed: list[str] = []
    panicked: list[str] = []
    for line in lines:
        if line.startswith("stack backtrace:"):
            break
        panic = _PANIC.match(line)
        if panic:
            file = file or _file_of(panic.group(1))
            if panic.group(1).startswith("'"):  # before Rust 1.73 the message is on this line
                panicked.append(panic.group(1).rsplit("', ", 1)[0].removeprefix("'"))
            else:
                panicked.append("")  # the message follows
            continue
        if not line.startswith(_NOISE):
            (panicked if panicked else printed).append(line)
    text = "\n".join(line for line in [*panicked, *printed] if line.strip())
    return FailedTest(name, file, text[:MESSAGE_CHARS])


def _blocks_and_list(lines: list[str]) -> list[FailedTest]:
    """Each `---- NAME stdout ----` block, then each name of a `failures:` list without one, in
    the order the test binaries ran (cargo's `Running` and `Doc-tests` lines name them)."""
    found: list[FailedTest] = []
    # What names the test's binary before its own name, as a backtrace does: two crates'
    # `tests::it_works` stay apart (`core_math::tests::it_works`, `app::tests::it_works`).
    prefix = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if running := _RUNNING.match(line):
            prefix = f"{running.group(1)}::"
            continue
        if doc := _DOC_TESTS.match(line):
            prefix = f"{doc.group(1)} doctest "
            continue
        header = _BLOCK.match(line)
        if header is not None:
            body: list[str] = []
            while index < len(lines) and lines[index] != "failures:":
                if _BLOCK.match(lines[index]):
                    break
                body.append(lines[index])
                index += 1
            test = _read_block(header.group(1), body)
            found.append(FailedTest(prefix + test.test_id, test.file, test.message))
        elif line == "failures:":
            named = {test.test_id for test in found}
            for name in _list_after(lines, index):
                if prefix + name not in named:
                    found.append(FailedTest(prefix + name, None, ""))
    return found


def _list_after(lines: list[str], index: int) -> list[str]:
    """The indented names right after a `failures:` line (none after the first one, which the
    blocks follow)."""
    names: list[str] = []
    for after in lines[index:]:
        entry = _LIST_ENTRY.match(after)
        if entry is None:
            if after.strip():
                break
            continue
        names.append(entry.group(1).strip())
    return names


def _compile_errors(lines: list[str]) -> list[FailedTest]:
    """One entry per crate that did not compile: its first error and the file it points at."""
    failed: list[FailedTest] = []
    first_error: list[str] = []
    file: str | None = None
    collecting = False
    for line in lines:
        if _ERROR.match(line) and not _COMPILE.match(line) and not first_error:
            collecting = True
        if collecting:
            arrow = _ARROW.match(line)
            file = file or (arrow.group(1) if arrow else None)
            if not line.strip():
                collecting = False
            else:
                first_error.append(line)
        crate = _COMPILE.match(line)
        name = f"{crate.group(1)} (does not compile)" if crate else ""
        if crate and name not in {f.test_id for f in failed}:  # once, not per target
            failed.append(FailedTest(name, file, "\n".join(first_error)[:MESSAGE_CHARS]))
        if crate:
            first_error, file, collecting = [], None, False
    return failed


def libtest_failures(output: str) -> list[FailedTest]:
    """The failing tests in a `cargo test` run's output (its standard output and error, merged
    in the order they were written)."""
    lines = output.splitlines()
    return _blocks_and_list(lines) or _compile_errors(lines)


def tests_started(output: str) -> int:
    """How many tests libtest started, over every test binary (`running 2 tests`)."""
    return sum(int(n) for n in _STARTED.findall(output))
