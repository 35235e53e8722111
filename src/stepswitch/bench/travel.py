"""What a task run takes to another machine and brings back (ADR 0029), as plain picklable
data: the task's files with their sha256, the contestant's policy and script as text, and the
code identity of the ssw that sent it; back come the run's record folder, its ledger rows and
its journal row. Nothing travels as a path of the sending machine, and no key travels at all.
"""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from stepswitch import __version__
from stepswitch.bench.cluster_keys import TaskRunKeys
from stepswitch.bench.contestants import BuiltinContestant, Contestant, PolicyContestant
from stepswitch.bench.plan import RunKey
from stepswitch.bench.results import ResultRow
from stepswitch.errors import UsageError
from stepswitch.registry.trust import Trust


@cache
def code_identity() -> str:
    """This ssw's version and the sha256 of its package's source: a worker must match it."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return f"ssw {__version__} ({digest.hexdigest()[:16]})"


def files_sha256(files: dict[str, bytes], executable: frozenset[str]) -> str:
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(f"{rel}\0{rel in executable}\0".encode() + files[rel] + b"\0")
    return digest.hexdigest()


def _safe(rel: str) -> PurePosixPath:
    path = PurePosixPath(rel)
    if path.is_absolute() or not path.parts or ".." in path.parts:
        raise ValueError(f"a travelling file's path is not inside its folder: {rel!r}")
    return path


def read_folder(folder: Path) -> tuple[dict[str, bytes], frozenset[str]]:
    """Every file under `folder` by its relative path, and those that are executable. A
    symlink is refused: what it points at is on this machine only."""
    files: dict[str, bytes] = {}
    executable = set()
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            raise UsageError(f"{path}: a symlink cannot travel to a cluster worker")
        if path.is_file():
            files[rel] = path.read_bytes()
            if path.stat().st_mode & stat.S_IXUSR:
                executable.add(rel)
    return files, frozenset(executable)


def write_folder(folder: Path, files: dict[str, bytes], executable: frozenset[str]) -> None:
    for rel, data in files.items():
        path = folder.joinpath(*_safe(rel).parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel in executable:
            path.chmod(0o755)


@dataclass(frozen=True)
class TaskFiles:
    suite: str
    name: str  # the task folder's name
    files: dict[str, bytes]
    executable: frozenset[str]
    sha256: str

    @classmethod
    def of(cls, folder: Path, suite: str) -> TaskFiles:
        files, executable = read_folder(folder)
        return cls(suite, folder.name, files, executable, files_sha256(files, executable))

    def unpack(self, where: Path) -> Path:
        """The task's folder under `where`, after checking its files are the ones sent."""
        if files_sha256(self.files, self.executable) != self.sha256:
            raise ValueError(f"task {self.suite}/{self.name}: its files do not match their sha256")
        folder = where / self.suite / self.name
        write_folder(folder, self.files, self.executable)
        return folder


@dataclass(frozen=True)
class TravellingContestant:
    name: str
    builtin: bool
    policy: str = ""  # the policy file's text
    script: str | None = None  # the scripted replies' text
    population: str | None = None  # the simulated population file's text
    trusted: tuple[str, ...] = ()  # the hosts the user trusts with a key (--trust-endpoint)

    @classmethod
    def of(cls, contestant: Contestant) -> TravellingContestant:
        if isinstance(contestant, BuiltinContestant):
            return cls(contestant.name, True)
        if not isinstance(contestant, PolicyContestant):
            raise UsageError(
                f"contestant {contestant.name!r} cannot run on a cluster: only oracle, null "
                "and policy files travel"
            )
        script = Path(contestant.script).read_text("utf-8") if contestant.script else None
        sim = contestant.population
        population = Path(sim).read_text("utf-8") if sim else None
        policy = Path(contestant.path).read_text("utf-8")
        trusted = tuple(sorted(contestant.trust.hosts))
        return cls(contestant.name, False, policy, script, population, trusted)

    def at(self, where: Path) -> Contestant:
        """The contestant again, its files written under `where`."""
        if self.builtin:
            return BuiltinContestant(self.name)
        where.mkdir(parents=True, exist_ok=True)
        policy = where / f"{self.name}.toml"
        policy.write_text(self.policy, encoding="utf-8")
        script = None
        if self.script is not None:
            script = where / f"{self.name}.script.yaml"
            script.write_text(self.script, encoding="utf-8")
        population = None
        if self.population is not None:
            population = where / f"{self.name}.population.toml"
            population.write_text(self.population, encoding="utf-8")
        return PolicyContestant(
            self.name,
            str(policy),
            str(script) if script else None,
            str(population) if population else None,
            Trust(frozenset(self.trusted)),
        )


@dataclass(frozen=True)
class RemoteJob:
    token: str  # one submission: a worker that finds it started already does not run it again
    bench_id: str
    key: RunKey
    task: TaskFiles
    contestant: TravellingContestant
    sandbox: str
    network: bool
    identity: str  # code_identity() of the sender
    # The provider keys this run needs (cluster_keys.py); never in a repr, a file or an env.
    keys: TaskRunKeys = field(default_factory=TaskRunKeys, repr=False)


@dataclass(frozen=True)
class RemoteOutcome:
    token: str
    row: ResultRow | None  # the journal's row (None: released, it never called a model)
    why: str = ""
    budget_stop: bool = False
    interrupted: bool = False
    record: dict[str, bytes] = field(default_factory=dict)  # the run's record folder
    executable: frozenset[str] = frozenset()
    ledger_rows: list[dict[str, Any]] = field(default_factory=list)
    refused: str = ""  # the worker did not run it: why (another ssw, started once already)
    lost: bool = False  # refused because an earlier try of this submission was lost
    released: bool = False  # the run said it may run again (no model called, or a built-in)
