"""The pre-flight's baseline kept per base commit and environment, so that the next run of the
same commit makes its first call without running the gates again
(docs/decisions/0075-the-first-call-sooner.md).

A baseline is kept in the user's checkout, `<checkout>/.ssw/cache/baselines/<commit>.json`,
beside the call map and the test durations: never in the worktree the agent writes (the sandbox
hides the checkout, its `.ssw` folder included). It is kept only by a run whose pre-flight ran in
full and found every gate runnable, and read back only when

- its commit is the run's base commit (which names the lockfiles and the gate configuration's
  files exactly: a commit is its content), and
- its fingerprint is the one this run computes: the gate configuration as read, the gates'
  interpreter (its path, its real executable, its venv's `pyvenv.cfg`, and what is installed in
  its site folders: names, versions and `.pth` files), the allow-listed environment the gates
  run with, ssw's version and its gate code, the sandbox's kind and whether it lets the network
  through, and
- its content has the shape this module writes, names the configured gates in their order,
  and keeps findings only of command gates that failed, and failing test ids only of suite gates
  that failed.

Anything else (missing, unreadable, another commit or environment, a hand-edited file) is no
baseline, and the pre-flight runs in full. What a kept baseline spares is the import check, the
truth check on the untouched tree and each gate's run; the checks that need no command (each
command's first word resolves, golden files and protected paths at the base commit) still run,
since a tool uninstalled since shows there in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

import stepswitch
from stepswitch.gates.baseline import COLLECT, Baseline, BaselineGate
from stepswitch.gates.config import CommandGate, SuiteGate, TestsGate
from stepswitch.gates.findings import KnownFindings
from stepswitch.gates.interpreter import ImportCheck, Interpreter
from stepswitch.gates.known_failures import KnownFailures
from stepswitch.gates.suite import GateSuite
from stepswitch.util.text_files import text_or_empty

STORE_FOLDER = "baselines"  # under the suite's state folder, <checkout>/.ssw/cache
KEEP = 50  # baselines kept per checkout: the newest, by when they were written
SCHEMA_VERSION = 1
# The per-run parts of the gates' environment: a scratch HOME and its TMPDIR.
_PER_RUN = frozenset({"HOME", "TMPDIR"})
_OWN_CODE = ("gates", "util")  # ssw's packages whose code decides a gate's verdict


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StoredGate(_Stored):
    name: str
    passed: bool
    duration_s: float
    report: str


class StoredBaseline(_Stored):
    """One file of the store: a run's baseline at `commit` in the environment `fingerprint`."""

    schema_version: Literal[1] = 1
    commit: str
    fingerprint: str
    run_id: str  # the run whose pre-flight this is
    gates: tuple[StoredGate, ...]
    imports: dict[str, str]  # package -> the folder it was imported from, relative to the tree
    findings: dict[str, dict[str, int]]  # a command gate failing before any edit: its findings
    # A suite gate failing before any edit: the ids of its failing tests (gates.known_failures).
    failed_tests: dict[str, tuple[str, ...]] = {}


def fingerprint(suite: GateSuite) -> str:
    """What besides the base commit decides the pre-flight's verdicts, as one sha256."""
    confinement = suite.context.confinement
    root = str(suite.root)
    parts = {
        "schema": SCHEMA_VERSION,
        "ssw": [stepswitch.__version__, _own_code()],
        "config": [suite.config.source, suite.config.config_file, repr(suite.config.gates)],
        "interpreter": _interpreter(suite.interpreter),
        # The worktree's path differs per run; what the gates run with otherwise must not.
        "env": sorted(
            (name, value.replace(root, "<tree>"))
            for name, value in suite.env.items()
            if name not in _PER_RUN
        ),
        "sandbox": [
            confinement.sandbox.name if confinement is not None else "none",
            confinement.policy.network if confinement is not None else True,
        ],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _own_code() -> list[tuple[str, int, int]]:
    """ssw's gate code as files' sizes and times: a changed checkout of ssw (same version)
    judges anew."""
    package = Path(stepswitch.__file__).parent
    found = []
    for sub in _OWN_CODE:
        for path in sorted((package / sub).rglob("*.py")):
            stat = path.stat()
            found.append((path.relative_to(package).as_posix(), stat.st_size, stat.st_mtime_ns))
    return found


def _interpreter(interpreter: Interpreter) -> dict[str, object]:
    python = interpreter.python
    real = python.resolve()
    venv = interpreter.venv
    prefix = venv if venv is not None else real.parent.parent
    stat = real.stat() if real.exists() else None
    return {
        "python": str(python),
        "real": [str(real), stat.st_size if stat else -1, stat.st_mtime_ns if stat else -1],
        "pyvenv": text_or_empty(venv / "pyvenv.cfg") if venv is not None else "",
        "site": [_installed(site) for site in sorted(prefix.glob("lib/python3*/site-packages"))],
    }


def _installed(site: Path) -> list[str]:
    """What a site folder holds (distributions carry their versions in their names), with each
    `.pth` file's content, which says where an editable install imports from."""
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return []
    return [
        f"{name}={text_or_empty(site / name)}" if name.endswith(".pth") else name for name in names
    ]


def _expected_names(suite: GateSuite) -> list[str]:
    """The verdicts a pre-flight of `suite` gives, in order: the tests gate is only collected."""
    return [
        f"{g.name}:{COLLECT}" if isinstance(g, TestsGate) else g.name for g in suite.config.gates
    ]


class BaselineStore:
    """The baselines kept for one checkout, in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def of(cls, suite: GateSuite) -> BaselineStore | None:
        """The store of the checkout `suite` runs in, None when its state folder is inside the
        tree the gates judge (where the agent writes: nothing there is trusted)."""
        state = suite.state_dir.resolve()
        if state.is_relative_to(suite.root.resolve()):
            return None
        return cls(state / STORE_FOLDER)

    def _path(self, commit: str) -> Path:
        return self.folder / f"{commit}.json"

    def load(self, suite: GateSuite, commit: str, print_: str) -> StoredBaseline | None:
        """The baseline kept for `commit` in the environment `print_` (a `fingerprint`), when it
        is one this suite's pre-flight would have given; None otherwise."""
        try:
            stored = StoredBaseline.model_validate_json(self._path(commit).read_bytes())
        except (OSError, ValidationError):
            return None
        if stored.commit != commit or stored.fingerprint != print_:
            return None
        if [g.name for g in stored.gates] != _expected_names(suite):
            return None
        # Findings only of command gates that failed, failing tests only of suite gates that did.
        failing = {
            kind: {
                g.name
                for g, kept in zip(suite.config.gates, stored.gates, strict=True)
                if isinstance(g, kind) and not kept.passed
            }
            for kind in (CommandGate, SuiteGate)
        }
        if not set(stored.findings) <= failing[CommandGate]:
            return None
        if not set(stored.failed_tests) <= failing[SuiteGate]:
            return None
        return stored

    def save(self, stored: StoredBaseline) -> None:
        """Keep `stored` (written whole, then renamed into place), and only the newest KEEP."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(stored.commit)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(stored.model_dump_json(), encoding="utf-8")
        os.replace(partial, path)
        kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for old in kept[:-KEEP]:
            old.unlink(missing_ok=True)


def reuse_baseline(suite: GateSuite, commit: str, print_: str) -> Baseline | None:
    """The baseline a run of `commit` kept in this environment (`print_`, its `fingerprint`),
    made this run's: the import
    check's folders under this tree, the known findings of the command gates that already
    failed; None when there is none to reuse (the pre-flight then runs in full). The call map
    is left to the caller."""
    store = BaselineStore.of(suite)
    if store is None:
        return None
    stored = store.load(suite, commit, print_)
    if stored is None:
        return None
    for name, found in stored.findings.items():
        suite.known_findings[name] = KnownFindings(name, Counter(found))
    for name, ids in stored.failed_tests.items():
        suite.known_failures[name] = KnownFailures(name, frozenset(ids))
    imports = ImportCheck(
        suite.interpreter,
        suite.context.layout,
        {name: str(suite.root / relative) for name, relative in stored.imports.items()},
    )
    # This run spent no time on them: the verdicts are the earlier run's.
    gates = tuple(BaselineGate(g.name, g.passed, 0.0, g.report) for g in stored.gates)
    judged = {name: sum(found.values()) for name, found in stored.findings.items()}
    judged_tests = {name: len(ids) for name, ids in stored.failed_tests.items()}
    return Baseline(gates, imports, commit, "", judged, judged_tests, reused_from=stored.run_id)


def keep_baseline(suite: GateSuite, baseline: Baseline, run_id: str, print_: str) -> None:
    """Keep `baseline` (a full pre-flight of run `run_id` in the environment `print_`, its
    `fingerprint` taken before it ran) for the next run of its commit, when
    it is one a later run may stand on: every gate ran (no failing check of the gates' truth)
    and the imports were checked inside the tree."""
    store = BaselineStore.of(suite)
    if store is None or not run_id or baseline.imports is None:
        return
    if [g.name for g in baseline.gates] != _expected_names(suite):
        return
    imports = _relative(baseline.imports.found.items(), suite.root)
    if imports is None:
        return
    findings = {name: dict(known.start) for name, known in suite.known_findings.items()}
    stored = StoredBaseline(
        commit=baseline.base_commit,
        fingerprint=print_,
        run_id=run_id,
        gates=tuple(
            StoredGate(name=g.name, passed=g.passed, duration_s=g.duration_s, report=g.report)
            for g in baseline.gates
        ),
        imports=imports,
        findings=findings,
        failed_tests={
            name: tuple(sorted(known.start)) for name, known in suite.known_failures.items()
        },
    )
    try:
        store.save(stored)
    except OSError:  # a cache: this run goes on, and the next one runs its pre-flight in full
        return


def _relative(found: Iterable[tuple[str, str]], root: Path) -> dict[str, str] | None:
    """Each package's folder relative to `root`; None when one is not inside it."""
    out: dict[str, str] = {}
    top = root.resolve()
    for name, path in found:
        try:
            out[name] = Path(path).resolve().relative_to(top).as_posix()
        except ValueError:
            return None
    return out
