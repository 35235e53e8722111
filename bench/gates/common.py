"""What the gates benchmark's scripts share: where the target project lives, how pytest is run on
it, and how a mutation is applied and reverted.

The target project is set up by setup.sh under bench/gates/.work/ (gitignored).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from stepswitch.util.source_state import source_state

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORK = HERE / ".work"
# BENCH_PROJECT picks the target: packaging (the first benchmark, a venv beside the project), or
# one of the real projects of bench/gates/inrun.py, each with its own .venv inside the repository
# and an editable install, as a user's checkout has (setup.sh makes them).
PROJECTS = {
    # name: (version, folder of the modules to mutate, excluded modules)
    "packaging": ("26.4", "src/packaging", ("src/packaging/licenses/_spdx.py",)),
    "python-dateutil": ("4.0.0", "src/dateutil", ("src/dateutil/_version.py",)),
    "boltons": ("26.2.0", "boltons", ()),
    "pyflakes": ("4.1.0", "pyflakes", ()),
}
PROJECT_NAME = os.environ.get("BENCH_PROJECT", "packaging")
PROJECT_VERSION, PACKAGE_DIR, EXCLUDED_MODULES = PROJECTS[PROJECT_NAME]
PROJECT = WORK / f"{PROJECT_NAME}-{PROJECT_VERSION}"
# BENCH_LEVEL=module seeds and measures the held-out kind instead: mutations on lines that run
# at import (module-level statements, class bodies, decorators, default values; ADR 0076), in
# files of their own (mutations-<project>-module.json, ...).
LEVEL = os.environ.get("BENCH_LEVEL", "function")
if LEVEL not in ("function", "module"):
    raise SystemExit(f"BENCH_LEVEL={LEVEL}: function or module")
_SUFFIX = "" if LEVEL == "function" else f"-{LEVEL}"
if PROJECT_NAME == "packaging":
    VENV_PYTHON = WORK / "venv" / "bin" / "python"
    MUTATIONS_JSON = HERE / f"mutations{_SUFFIX}.json"
    RESULTS_CSV = HERE / f"results{_SUFFIX}.csv"
    SUMMARY_JSON = HERE / f"summary{_SUFFIX}.json"
else:
    VENV_PYTHON = PROJECT / ".venv" / "bin" / "python"
    MUTATIONS_JSON = HERE / f"mutations-{PROJECT_NAME}{_SUFFIX}.json"
    RESULTS_CSV = HERE / f"results-{PROJECT_NAME}{_SUFFIX}.csv"
    SUMMARY_JSON = HERE / f"summary-{PROJECT_NAME}{_SUFFIX}.json"

# The same flags for every pytest run, with and without a selection. The project's own addopts
# (pyproject.toml) still apply: among them `-m "not property"`, which deselects its opt-in
# Hypothesis property tests in both stages alike.
PYTEST_FLAGS = ["-q", "-p", "no:cacheprovider"]
FAIL_FAST = ["-x"]
# A mutation can turn a loop into an endless one: a run past this is a timeout, not a verdict.
RUN_TIMEOUT_S = 240.0

# While this file exists another measurement needs a quiet machine: the scripts wait before each
# heavy step (a suite run, a mutation), looking every QUIET_POLL_S seconds.
QUIET_FLAG = Path("/tmp/ssw-quiet")
QUIET_POLL_S = 5.0

_FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)
_COLLECTED = re.compile(r"(\d+)(?:/(\d+))? tests? collected(?: \((\d+) deselected\))?")


def stepswitch_tree() -> dict[str, object]:
    """The ssw commit measured and whether the code it runs is that commit's (src/, these
    scripts, and the rest of util/source_state.py's one rule): a summary carries both, and
    evidence from a dirty tree proves nothing (ADR 0028). Taken before the first measurement.
    The results an earlier project's run just wrote beside these scripts are not the code."""
    state = source_state(REPO, scripts=("bench/gates/*.py", "bench/gates/*.sh"))
    return {
        "stepswitch_commit": state.commit,
        "stepswitch_dirty": state.dirty,
        "stepswitch_dirty_why": list(state.why),
    }


def wait_quiet(what: str = "") -> None:
    """Wait while QUIET_FLAG exists, saying so once per wait."""
    if not QUIET_FLAG.exists():
        return
    began = time.monotonic()
    print(f"waiting: {QUIET_FLAG} exists{f' (before {what})' if what else ''}", flush=True)
    while QUIET_FLAG.exists():
        time.sleep(QUIET_POLL_S)
    print(f"waited {time.monotonic() - began:.0f} s for {QUIET_FLAG} to go", flush=True)


def pytest_env() -> dict[str, str]:
    """One process environment for every run: this one, less what would change pytest's
    behaviour between runs, with a fixed hash seed."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "COV_", "COVERAGE_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONHASHSEED"] = "0"
    return env


@dataclass(frozen=True)
class Run:
    rc: int  # pytest's exit code; -1 for a timeout
    seconds: float  # wall time of the whole process, start to exit
    first_failure: str  # the first FAILED/ERROR node id, if any
    tail: str  # the last lines of the output

    @property
    def failed(self) -> bool:
        """A failing verdict: tests failed (1) or a test module did not import (2)."""
        return self.rc in (1, 2)

    @property
    def passed(self) -> bool:
        """A passing verdict: all passed (0), or nothing selected to run (5)."""
        return self.rc in (0, 5)


def run_group(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[int, float, str]:
    """Run `cmd` in a process group of its own: its exit code (-1 for a timeout, which kills
    the whole group, the children a test started too), its wall time, its output."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = -1
    return rc, time.perf_counter() - began, out.decode("utf-8", "replace")


def run_pytest(args: list[str], *, fail_fast: bool = True, timeout: float = RUN_TIMEOUT_S) -> Run:
    """Run the target project's pytest with `args` (test files, or none for the whole suite)."""
    cmd = [
        str(VENV_PYTHON),
        "-m",
        "pytest",
        *PYTEST_FLAGS,
        *(FAIL_FAST if fail_fast else []),
        *args,
    ]
    rc, seconds, text = run_group(cmd, PROJECT, pytest_env(), timeout)
    match = _FAILED_LINE.search(text)
    tail = "\n".join(text.rstrip().splitlines()[-3:])
    return Run(rc, seconds, match.group(1) if match else "", tail)


def collected_count() -> tuple[int, int]:
    """(tests selected to run, tests deselected by the project's addopts) for the whole suite."""
    cmd = [str(VENV_PYTHON), "-m", "pytest", *PYTEST_FLAGS, "--collect-only"]
    proc = subprocess.run(cmd, cwd=PROJECT, env=pytest_env(), capture_output=True, text=True)
    match = _COLLECTED.search(proc.stdout)
    if proc.returncode != 0 or not match:
        raise SystemExit(f"cannot collect the suite:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return int(match.group(1)), int(match.group(3) or 0)


def drop_bytecode(path: Path) -> None:
    """Remove the module's cached bytecode: a one-character flip keeps the file's size and can
    keep its mtime second, and Python would then run the stale .pyc."""
    cache = path.parent / "__pycache__"
    for pyc in cache.glob(f"{path.stem}.*.pyc"):
        pyc.unlink()


def apply_mutation(mutation: dict[str, object], root: Path = PROJECT) -> bytes:
    """Write the mutated line into the module of the project at `root`; return the original
    bytes for revert()."""
    module = str(mutation["module"])
    path = root / module
    original = path.read_bytes()
    lines = original.decode("utf-8").splitlines(keepends=True)
    index = int(str(mutation["line"])) - 1
    before, after = str(mutation["before"]), str(mutation["after"])
    ending = lines[index][len(lines[index].rstrip("\r\n")) :]
    if lines[index].rstrip("\r\n") != before:
        raise SystemExit(f"{module}:{index + 1} is not what mutations.json expects: {before!r}")
    lines[index] = after + ending
    path.write_bytes("".join(lines).encode("utf-8"))
    drop_bytecode(path)
    return original


def revert(mutation: dict[str, object], original: bytes, root: Path = PROJECT) -> None:
    path = root / str(mutation["module"])
    path.write_bytes(original)
    drop_bytecode(path)
    ensure_clean(root)


def ensure_clean(root: Path = PROJECT) -> None:
    """The project's tracked files are as committed by its setup."""
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    if proc.stdout.strip():
        raise SystemExit(f"{root} is not clean:\n{proc.stdout}")


def require_setup() -> None:
    if not VENV_PYTHON.exists() or not (PROJECT / ".git").is_dir():
        raise SystemExit("run bench/gates/setup.sh first")
    if shutil.which("git") is None:
        raise SystemExit("git is needed")
    ensure_clean()


def load_json(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: not a JSON object")
    return data


def portable(text: str, worktree: Path | None = None) -> str:
    """`text` with this machine's paths taken out, for what the benchmark writes (summaries, rows,
    the lines a log keeps): a run's worktree becomes `<worktree>`, the checkout's own folder a
    path relative to it (the project under bench/gates/.work/ and its interpreter stay named),
    the temp folder `<tmp>` and the home folder `~`. The claims engine refuses evidence that
    holds an absolute machine path (docs/decisions/0026-evidence-raw-and-relative.md)."""
    import tempfile

    pairs: list[tuple[str, str]] = []
    if worktree is not None:
        pairs.append((worktree.resolve().as_posix(), "<worktree>"))
        pairs.append((worktree.as_posix(), "<worktree>"))
    pairs += [
        (REPO.as_posix(), "."),
        (Path(tempfile.gettempdir()).resolve().as_posix(), "<tmp>"),
        (Path.home().as_posix(), "~"),
    ]
    for folder, placeholder in pairs:
        if folder in ("", "/"):
            continue
        if placeholder == ".":
            text = text.replace(folder + "/", "")
        else:
            text = text.replace(folder + "/", placeholder + "/")
        text = text.replace(folder, placeholder)
    return text


def portable_row(row: dict[str, object], worktree: Path | None = None) -> dict[str, object]:
    """A result row with `portable` text cells."""
    return {k: portable(v, worktree) if isinstance(v, str) else v for k, v in row.items()}


def machine_record(
    load_start: tuple[float, ...], load_end: tuple[float, ...], tools: dict[str, str]
) -> dict[str, object]:
    """The summaries' `machine`: cores, the tools' versions (`tools`), Python, the platform and
    the load average as the measurement began and ended."""
    return {
        "cores": os.cpu_count(),
        **tools,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in load_end],
    }
