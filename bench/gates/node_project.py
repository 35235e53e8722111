"""The Node target of the gates benchmark: a package from the npm registry, pinned in
node/project.json (name, version, the tarball's integrity hash, the test command), set up under
bench/gates/.work/ at run time and gated by ssw's own gate code (`GateSuite` with one suite gate).

`.venv/bin/python bench/gates/node_project.py` sets it up: `npm pack NAME@VERSION` into
.work/npm/, the tarball checked against the pinned integrity, unpacked into
.work/NAME-VERSION/ and made a git repository (one commit, node_modules excluded), then
`npm install --ignore-scripts` for its dependencies and the dev dependencies its tests use.
Idempotent: a clean, installed setup is kept.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import common

from stepswitch.gates.config import GateConfig, SuiteGate
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.suite_result import SuiteResult

NODE_DIR = common.HERE / "node"
PROJECT_JSON = NODE_DIR / "project.json"
MUTATIONS_JSON = NODE_DIR / "mutations.json"
RESULTS_CSV = NODE_DIR / "results.csv"
SUMMARY_JSON = NODE_DIR / "summary.json"
GATE = "tests"  # the suite gate's name: its stages are tests:impacted and tests:full
IMPACTED_STAGE = f"{GATE}:impacted"
FULL_STAGE = f"{GATE}:full"


@dataclass(frozen=True)
class NodeTarget:
    """The pinned description of the package and where it is set up."""

    name: str
    version: str
    integrity: str  # the registry's dist.integrity: "sha512-<base64>"
    tests: str  # the suite gate's command: the package's test files under its runner
    runner: str  # the ssw runner of that command ("node-test")
    sources: tuple[str, ...]  # the folders and files whose modules are mutated
    excluded: tuple[str, ...]  # modules left out of the mutations
    root: Path  # .work/NAME-VERSION

    @classmethod
    def load(cls, path: Path = PROJECT_JSON, work: Path = common.WORK) -> NodeTarget:
        data = common.load_json(path)
        name, version = str(data["name"]), str(data["version"])
        return cls(
            name=name,
            version=version,
            integrity=str(data["integrity"]),
            tests=str(data["tests"]),
            runner=str(data["runner"]),
            sources=tuple(str(s) for s in data["sources"]),  # type: ignore[attr-defined]
            excluded=tuple(str(s) for s in data.get("excluded", ())),  # type: ignore[attr-defined]
            root=work / f"{name}-{version}",
        )

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    def config(self, impacted_first: bool) -> GateConfig:
        """The gates ssw runs on it: one suite gate, configured as a user of a runner ssw
        does not read from package.json would configure it (.stepswitch.toml's [gates])."""
        gate = SuiteGate(
            name=GATE,
            kind="suite",
            runner=self.runner,  # type: ignore[arg-type]
            command=self.tests,
            impacted_first=impacted_first,
        )
        return GateConfig(gates=(gate,), source="bench/gates/node/project.json", config_file="-")

    def modules(self) -> list[str]:
        """The package's own JavaScript modules a mutation may change: not its tests."""
        found: list[str] = []
        for source in self.sources:
            path = self.root / source
            files = [path] if path.is_file() else sorted(path.rglob("*.js"))
            found += [f.relative_to(self.root).as_posix() for f in files]
        tests = (".test.js", ".spec.js")
        return [m for m in found if not m.endswith(tests) and m not in self.excluded]


def gate_suite(target: NodeTarget, impacted_first: bool) -> GateSuite:
    """ssw's gate code over the package, as a run builds it (unconfined, its own environment)."""
    return GateSuite(target.config(impacted_first), target.root, gate_env())


def gate_env() -> dict[str, str]:
    """One environment for every gate run: this one, less what changes node's test runner."""
    env = common.pytest_env()
    for key in ("NODE_OPTIONS", "NODE_V8_COVERAGE", "NODE_TEST_CONTEXT", "CI"):
        env.pop(key, None)
    return env


def failing_stage(result: SuiteResult) -> str:
    failed = result.failed
    return failed.name if failed is not None else ""


def sri(data: bytes) -> str:
    """The Subresource Integrity string npm records for a tarball."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def download(target: NodeTarget) -> Path:
    """The package's tarball from the npm registry, checked against the pinned integrity."""
    folder = common.WORK / "npm"
    folder.mkdir(parents=True, exist_ok=True)
    tarball = folder / f"{target.name}-{target.version}.tgz"
    if not tarball.is_file():
        out = _run(
            ["npm", "pack", target.spec, "--json", "--pack-destination", str(folder)], folder
        )
        packed = json.loads(out)[0]
        (folder / str(packed["filename"])).replace(tarball)
    got = sri(tarball.read_bytes())
    if got != target.integrity:
        tarball.unlink()
        raise SystemExit(f"{target.spec}: the tarball's integrity is {got}, not the pinned one")
    return tarball


def unpack(target: NodeTarget, tarball: Path) -> None:
    """The tarball's `package/` as target.root, a git repository of one commit."""
    shutil.rmtree(target.root, ignore_errors=True)
    staging = common.WORK / "npm" / "unpacked"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(staging, filter="data")
    (staging / "package").replace(target.root)
    shutil.rmtree(staging)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    _run([*git, "init", "--quiet"], target.root)
    exclude = target.root / ".git" / "info" / "exclude"
    exclude.write_text("node_modules/\npackage-lock.json\n", encoding="utf-8")
    _run([*git, "add", "--all"], target.root)
    _run([*git, "commit", "--quiet", "-m", f"{target.spec} from the npm registry"], target.root)


def installed(target: NodeTarget) -> dict[str, str]:
    """The version of each package the project depends on directly, as installed."""
    out = subprocess.run(
        ["npm", "ls", "--depth=0", "--json"], cwd=target.root, capture_output=True, text=True
    ).stdout
    deps = json.loads(out or "{}").get("dependencies", {})
    return {name: str(d.get("version", "")) for name, d in sorted(deps.items())}


def setup(target: NodeTarget) -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise SystemExit("node and npm are needed")
    if not (target.root / ".git").is_dir():
        unpack(target, download(target))
    common.ensure_clean(target.root)
    if not (target.root / "node_modules").is_dir():
        _run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund"], target.root)
    print(f"setup: {target.spec} in {common.portable(str(target.root))}", flush=True)


def require_setup(target: NodeTarget) -> None:
    if not (target.root / ".git").is_dir() or not (target.root / "node_modules").is_dir():
        raise SystemExit("run bench/gates/node_project.py first")
    common.ensure_clean(target.root)


if __name__ == "__main__":
    setup(NodeTarget.load())
    sys.exit(0)
