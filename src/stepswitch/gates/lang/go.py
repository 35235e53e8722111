"""Go: the gates a Go module gets, and the `go` runner.

Detection reads the root's go.mod: `gofmt -l` (failing when it lists a file; not testdata/ or
vendor/), `go vet ./...`
and `go test ./...`, the checks every Go project already answers to (the go tool has no file
that turns them on or off). A missing go tool is a note, never a silent skip.

The full suite runs as `go test -json`, its report written to the runner's report file
(`go_report` reads it); the compiler's errors stay in the output. Impacted-first: the packages
holding a changed file and the packages whose tests import them, directly or through the
module's own packages (`go_packages`), as `go test -json PKG...`. A change to go.mod, go.sum or
go.work, to vendor/, or to a file in no package of the module, or a command that is not plain
`go test`: the full suite only, and the selection says why."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stepswitch.gates.config import CommandGate, SuiteGate
from stepswitch.gates.lang.base import Detected, Detection, FailedTest, Selection
from stepswitch.gates.lang.command_words import command_words, runs
from stepswitch.gates.lang.go_packages import GO_MOD, module_path, read_module
from stepswitch.gates.lang.go_report import json_failures, json_tests_run, text_failures
from stepswitch.gates.lang.toolchain import missing_note, on_path
from stepswitch.util.text_files import text_or_empty

LANGUAGE = "Go"
_GO_GLOBS = ("*.go", GO_MOD, "go.sum")
# Files every package's build reads.
_SHARED = (GO_MOD, "go.sum", "go.work", "go.work.sum")
# Lists the files gofmt would change and fails when there is one (gofmt itself exits 0); the
# Go files of `./...`, so not testdata/ or vendor/ (test data may be unformatted on purpose).
GOFMT = (
    "unformatted=$(find . -name '*.go' -not -path '*/testdata/*' -not -path './vendor/*' "
    "-print0 | xargs -0 -r gofmt -l) || exit 1; "
    '[ -z "$unformatted" ] || { echo "gofmt -l: not formatted:"; echo "$unformatted"; exit 1; }'
)


def detect(root: Path) -> Detection:
    """The gates of the Go module at root, cheapest first: format, vet, tests."""
    if not (root / GO_MOD).is_file():
        return Detection(LANGUAGE)
    module = module_path(root)
    if module is None:
        return Detection(LANGUAGE, notes=(f"gates: {GO_MOD} declares no module: no Go gates",))
    declared = f"{GO_MOD} declares the module {module}"
    if not on_path("go"):
        return Detection(LANGUAGE, notes=(missing_note("go", declared, "Go gates"),))
    gates: list[Detected] = []
    if on_path("gofmt"):
        spec = CommandGate(name="format", command=GOFMT, timeout_s=120.0, globs=("*.go",))
        gates.append(Detected(spec, f"{declared}: gofmt -l, but for testdata/ and vendor/"))
    vet = CommandGate(name="vet", command="go vet ./...", timeout_s=600.0, globs=_GO_GLOBS)
    gates.append(Detected(vet, f"{declared}: go vet ./..."))
    tests = SuiteGate(name="tests", kind="suite", runner="go", command="go test ./...")
    gates.append(Detected(tests, f"{declared}: go test ./..."))
    notes = () if on_path("gofmt") else (missing_note("gofmt", declared, "format gate"),)
    return Detection(LANGUAGE, tuple(gates), notes)


def _is_pattern(word: str) -> bool:
    """A package argument of `go test`: ./..., ./calc, ., all."""
    return word in (".", "..", "all") or word.startswith(("./", "../")) or word.endswith("...")


def _with_json(words: list[str], packages: list[str] | None, report: Path) -> str:
    """`go test -json ARGS > REPORT`, its package arguments replaced by `packages` if given."""
    rest = [w for w in words[2:] if w not in ("-json", "--json")]
    if packages is not None:
        rest = [w for w in rest if not _is_pattern(w)] + packages
    return f"{shlex.join(['go', 'test', '-json', *rest])} > {shlex.quote(str(report))}"


def _relative(module: str, path: str) -> str:
    return "." if path == module else "./" + path.removeprefix(module + "/")


@dataclass(frozen=True)
class GoRunner:
    name: str = "go"
    language: str = LANGUAGE

    def full_command(self, command: str, report: Path) -> str:
        """`go test -json ...` writing its report to `report`; any other command as it is."""
        words = command_words(command)
        if not runs(words, "go", "test"):
            return command
        assert words is not None
        return _with_json(words, None, report)

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        """The changed packages and those whose tests reach them, as `go test -json PKG...`."""
        words = command_words(command)
        if not runs(words, "go", "test") or "-args" in (words or []):
            return Selection(None, (), "the command is not plain `go test`: the full suite only")
        assert words is not None
        module = read_module(root)
        if module is None:
            return Selection(None, (), f"{GO_MOD} declares no module: the full suite only")
        touched: set[str] = set()
        tests_only: set[str] = set()  # a _test.go file is compiled into its own package's tests
        for path in changed:
            package = module.package_of(path)
            if path in _SHARED or path.startswith("vendor/") or package is None:
                why = f"{path} changed, which is in no one package: the full suite only"
                return Selection(None, (), why)
            (tests_only if path.endswith("_test.go") else touched).add(package)
        chosen = sorted(set(module.reaching(touched)) | (tests_only & set(module.packages)))
        touched |= tests_only
        with_tests = sum(1 for p in module.packages.values() if p.has_tests)
        if not chosen:
            return Selection(None, (), "no package's tests reach the change: the full suite only")
        if len(chosen) == with_tests:
            return Selection(
                None, (), "every package's tests reach the change: the full suite only"
            )
        relative = [_relative(module.path, p) for p in chosen]
        names = ", ".join(_relative(module.path, p) for p in sorted(touched))
        why = f"{len(chosen)} of {with_tests} packages with tests reach {names}"
        return Selection(_with_json(words, relative, report), tuple(relative), why)

    def failures(self, output: str, report: Path) -> list[FailedTest]:
        """The failing tests, from the JSON report when the run wrote one."""
        text = text_or_empty(report)
        return json_failures(text, output) if text.strip() else text_failures(output)

    def tests_run(self, report: Path) -> int | None:
        """The tests (subtests included) the JSON report says passed, failed or were skipped."""
        text = text_or_empty(report)
        return json_tests_run(text) if text.strip() else None


GO = GoRunner()
