"""Suites in the Harbor task layout (ADR 0030): `ssw bench export --format harbor SUITE OUT`
and `ssw bench import harbor DIR`.

A task exports as OUT/<id>/:

    instruction.md           the task's brief: its instruction, and the tests it fails at the start
    task.toml                Harbor's schema 1.4; [metadata.ssw] keeps the ssw task's own fields
    environment/Dockerfile   a slim Python image, pytest pinned, the start copied to /app
    environment/repo/        the start (the task's repo/)
    tests/test.sh            run in a separate verifier container, the agent's /app collected
                             into it: the start's test files and declared data put back, the
                             hidden tests copied to /app/.ssw_hidden, the task's command run;
                             reward 1 in /logs/verifier/reward.txt only as ssw grades a pass
                             (its JUnit report, junit.xml beside it: tests ran, none failed,
                             errored or was skipped or xfailed), else 0
    tests/hidden/, tests/start/   the hidden tests; the start's test files and declared data
    solution/solve.sh        the reference: its files copied over /app, its deletions made
    solution/files/          the files the reference writes, whole

Import takes such a folder back (Harbor's own fields for what they say, [metadata.ssw] for
the rest); a task whose environment is anything but that Dockerfile's shape, or whose solution
is not a copy of files, is refused with the reason, task by task. A task.toml without
[metadata.ssw] is a task from elsewhere: harbor_foreign reads it.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from stepswitch.bench.grading_layout import copy_tree, is_test_file
from stepswitch.bench.harbor_foreign import import_foreign
from stepswitch.bench.harbor_shell import Refused
from stepswitch.bench.harbor_solution import reference_patch
from stepswitch.bench.import_source import LINKED_TASK, Allowance, SourceFolder, SourceRefused
from stepswitch.bench.oracle import reference_change
from stepswitch.bench.pytest_ids import has_tests
from stepswitch.bench.task import Task, brief_of, load_suite, load_task
from stepswitch.errors import SswError, UsageError
from stepswitch.util.toml import parse_toml

HARBOR_SCHEMA = "1.4"
IMAGE = "python:3.11-slim"
PYTEST = "pytest==9.2.0"
ORG = "stepswitch"
HIDDEN = ".ssw_hidden"
_COPY = re.compile(r"^COPY repo/ /app/$")
_PIP = re.compile(
    r"^RUN pip install --no-cache-dir((?: [A-Za-z0-9_.\-\[\]]+(?:==[A-Za-z0-9_.+!\-]+)?)+)$"
)


def _tree_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _dockerfile(task: Task) -> str:
    packages = " ".join([PYTEST, *task.spec.requires])
    return (
        f"FROM {IMAGE}\nRUN pip install --no-cache-dir {packages}\nWORKDIR /app\nCOPY repo/ /app/\n"
    )


# ssw's verdict (bench/verdict.py) read from pytest's JUnit report as ssw reads it: tests ran,
# none failed, errored or was skipped (pytest reports an xfail as skipped), and pytest exited 0.
_VERDICT = """\
import sys, xml.etree.ElementTree as ET
suites = list(ET.parse(sys.argv[1]).getroot().iter("testsuite"))
counts = [int(s.get(k) or 0) for s in suites for k in ("tests", "failures", "errors", "skipped")]
sys.exit(0 if len(counts) == 4 and counts[0] > 0 and counts[1:] == [0, 0, 0] else 1)
"""


def _test_sh(task: Task) -> str:
    command = task.spec.tests.command
    return f"""#!/bin/bash
# The hidden tests of the ssw task {task.name}, run as its grading runs them: the start's test
# files and declared test data put back over the change, the hidden tests in /app/{HIDDEN}.
# Reward 1 only as ssw grades a pass: pytest exits 0 and its report has tests, none skipped.
mkdir -p /logs/verifier
cd /app || exit 1
cp -a /tests/start/. /app/
rm -rf /app/{HIDDEN}
cp -a /tests/hidden /app/{HIDDEN}
report=/logs/verifier/junit.xml
rm -f "$report"
if timeout {int(task.spec.tests.timeout_s)} {command} --junitxml="$report" \\
  && [ -s "$report" ] && python3 - "$report" <<'EOF'
{_VERDICT}EOF
then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def _solve_sh(deletions: tuple[str, ...]) -> str:
    lines = [
        "#!/bin/bash",
        "# The task's reference change: its files written whole, its deletions made.",
    ]
    lines.append("cp -a /solution/files/. /app/")
    lines += [f"rm -f -- /app/{shlex.quote(rel)}" for rel in deletions]
    return "\n".join(lines) + "\n"


def _config(task: Task) -> dict[str, Any]:
    spec = task.spec
    ssw: dict[str, Any] = {
        "suite": task.suite,
        "id": spec.id,
        "kind": spec.kind,
        "tests_command": spec.tests.command,
        "per_test_timeout_s": spec.tests.per_test_timeout_s,
        "visible": spec.tests.visible,
        "data": list(spec.tests.data),
        "task_timeout_s": spec.limits.task_timeout_s,
        "sha256": _tree_sha256(task.folder),
    }
    if spec.tests.failing_at_start:
        ssw["failing_at_start"] = list(spec.tests.failing_at_start)
    if spec.requires:
        ssw["requires"] = list(spec.requires)
    if spec.gates is not None:
        ssw["gates"] = spec.gates
    first = task.instruction.strip().splitlines()[0]
    return {
        "schema_version": HARBOR_SCHEMA,
        # The verifier runs in a fresh container of the same image, the agent's /app copied in:
        # out of the agent's reach, as ssw grades.
        "artifacts": ["/app"],
        "task": {"name": f"{ORG}/{task.suite}-{spec.id}", "version": "1.0.0", "description": first},
        "metadata": {"ssw": ssw},
        "verifier": {"timeout_sec": float(spec.tests.timeout_s), "environment_mode": "separate"},
        "agent": {"timeout_sec": float(spec.limits.task_timeout_s)},
        "environment": {"network_mode": "no-network", "build_timeout_sec": 600.0},
    }


def _write(path: Path, text: str, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)


def export_task(task: Task, out: Path) -> Path:
    """`task` as a Harbor task folder in `out`; returns it."""
    folder = out / task.spec.id
    if folder.exists():
        raise UsageError(f"{folder} exists: export into an empty folder")
    if task.spec.tests.overlay or task.graded_ids:
        raise UsageError(
            f"{task.name} lays its hidden tests over the tree or grades by test ids (a SWE-bench "
            "task): Harbor's layout here runs .ssw_hidden/ whole"
        )
    if task.spec.requires_tools:  # the image is a plain Python one (ADR 0082)
        tools = ", ".join(task.spec.requires_tools)
        raise UsageError(f"its tests run {tools}, which the exported Python image does not have")
    _write(folder / "instruction.md", task.brief)  # a Harbor agent is told the failing tests too
    _write(folder / "task.toml", tomli_w.dumps(_config(task)))
    _write(folder / "environment/Dockerfile", _dockerfile(task))
    copy_tree(task.repo, folder / "environment/repo")
    _write(folder / "tests/test.sh", _test_sh(task), executable=True)
    shutil.copytree(task.folder / "tests", folder / "tests/hidden")
    start = folder / "tests/start"
    start.mkdir(parents=True)
    for rel in sorted(set(task.data_files) | _test_files(task.repo)):
        (start / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(task.repo / rel, start / rel)
    with tempfile.TemporaryDirectory(prefix="ssw-harbor-") as tmp:
        change = reference_change(task, task.repo, Path(tmp))
    for rel, text in change.writes.items():
        _write(folder / "solution/files" / rel, text)
    (folder / "solution/files").mkdir(parents=True, exist_ok=True)
    _write(folder / "solution/solve.sh", _solve_sh(change.deletions), executable=True)
    return folder


def _test_files(repo: Path) -> set[str]:
    return {
        p.relative_to(repo).as_posix()
        for p in repo.rglob("*")
        if p.is_file() and is_test_file(p.relative_to(repo))
    }


def export_suite(suite: Path, out: Path) -> list[Path]:
    """Every task of `suite` in `out`, or none: the tasks are written into a folder beside `out`
    and moved into it once all are written, so a task that cannot be exported, or an export
    stopped halfway, leaves nothing behind."""
    tasks = load_suite(suite)  # a ConfigError names the file
    there = sorted(t.spec.id for t in tasks if (out / t.spec.id).exists())
    if there:
        raise UsageError(f"{out} already holds {', '.join(there[:3])}: export into a new folder")
    out.absolute().parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.ssw-export-", dir=out.absolute().parent))
    try:
        for task in tasks:
            try:
                export_task(task, staging)
            except (SswError, OSError) as exc:
                raise UsageError(f"{task.name} cannot be exported, so none was: {exc}") from None
        if not out.exists() or not any(out.iterdir()):
            staging.replace(out)  # one rename: the whole export appears at once
        else:  # beside what the folder holds already: each task whole, once all are written
            for task in tasks:
                (staging / task.spec.id).rename(out / task.spec.id)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / task.spec.id for task in tasks]


# --- import ---


@dataclass(frozen=True)
class Imported:
    name: str
    folder: Path | None  # the ssw task written, or None: refused
    why: str = ""


def _ssw_fields(config: dict[str, Any]) -> dict[str, Any]:
    ssw = config.get("metadata", {}).get("ssw")
    if not isinstance(ssw, dict):
        raise Refused("task.toml has no [metadata.ssw]: not a task ssw exported")
    return ssw


def _check_environment(folder: Path) -> None:
    dockerfile = folder / "environment/Dockerfile"
    if not dockerfile.is_file():
        raise Refused("no environment/Dockerfile (only a plain Python image is taken)")
    lines = [line.strip() for line in dockerfile.read_text("utf-8").splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if len(lines) != 4 or not lines[0].startswith("FROM python:") or lines[2] != "WORKDIR /app":
        raise Refused("environment/Dockerfile is not a plain Python image with pip requirements")
    if not _PIP.match(lines[1]) or not _COPY.match(lines[3]):
        raise Refused("environment/Dockerfile installs or copies something else")
    others = {p.name for p in (folder / "environment").iterdir()} - {"Dockerfile", "repo"}
    if others:
        raise Refused(f"environment/ holds more than the Dockerfile and repo/: {sorted(others)}")


def _check_solution(folder: Path) -> tuple[str, ...]:
    """The deletions solve.sh makes, once it is seen to be a copy of solution/files."""
    solve = folder / "solution/solve.sh"
    if not solve.is_file() or not (folder / "solution/files").is_dir():
        raise Refused("no solution/solve.sh with solution/files/")
    deletions = []
    for line in solve.read_text("utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line == "cp -a /solution/files/. /app/":
            continue
        parts = shlex.split(line)
        if len(parts) == 4 and parts[:3] == ["rm", "-f", "--"] and parts[3].startswith("/app/"):
            deletions.append(parts[3].removeprefix("/app/"))
            continue
        raise Refused(f"solution/solve.sh does more than copy files: {line!r}")
    return tuple(deletions)


def _instruction(folder: Path, failing_at_start: list[str]) -> str:
    """The ssw task's instruction: instruction.md without what export adds to it, the failing
    tests' list or the note that hidden tests judge a start without tests (the brief adds it
    again)."""
    text = (folder / "instruction.md").read_text("utf-8")
    hidden_only = not has_tests(folder / "environment/repo")
    listed = brief_of("", failing_at_start, hidden_only)
    return text.removesuffix(listed) + "\n" if listed and text.endswith(listed) else text


def import_task(folder: Path, out: Path) -> Path:
    config = parse_toml((folder / "task.toml").read_text("utf-8"))
    if "ssw" not in config.get("metadata", {}):
        return import_foreign(folder, config, out)
    ssw = _ssw_fields(config)
    _check_environment(folder)
    deletions = _check_solution(folder)
    if not (folder / "tests/hidden").is_dir():
        raise Refused("no tests/hidden/: the hidden tests")
    task_toml: dict[str, Any] = {
        "id": ssw["id"],
        "kind": ssw["kind"],
        "tests": {
            "command": ssw["tests_command"],
            "per_test_timeout_s": ssw["per_test_timeout_s"],
            "timeout_s": config.get("verifier", {}).get("timeout_sec", 300.0),
            "visible": ssw["visible"],
            **({"data": ssw["data"]} if ssw.get("data") else {}),
            **({"failing_at_start": failing} if (failing := ssw.get("failing_at_start")) else {}),
        },
        "limits": {"task_timeout_s": config.get("agent", {}).get("timeout_sec", 1800.0)},
        **({"requires": ssw["requires"]} if ssw.get("requires") else {}),
        **({"gates": ssw["gates"]} if "gates" in ssw else {}),
    }
    dest = out / str(ssw["id"])
    if dest.exists():
        raise Refused(f"{dest} exists")
    with tempfile.TemporaryDirectory(prefix="ssw-harbor-") as tmp:
        patch = reference_patch(
            folder / "environment/repo", folder / "solution/files", deletions, Path(tmp)
        )
    try:
        _write(dest / "task.toml", tomli_w.dumps(task_toml))
        _write(dest / "instruction.md", _instruction(folder, ssw.get("failing_at_start", [])))
        copy_tree(folder / "environment/repo", dest / "repo")
        shutil.copytree(folder / "tests/hidden", dest / "tests")
        _write(dest / "solution/solution.patch", patch)
        load_task(dest, out.name)  # what was written is a task ssw takes
    except (SswError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise Refused(f"not a valid ssw task once written: {exc}") from None
    return dest


def import_harbor(source: Path, out: Path) -> list[Imported]:
    """Every task folder of `source` (a folder holding task.toml) as an ssw task in `out`, each
    read from a copy import_source made of it (no link followed, sizes bounded)."""
    if not source.is_dir():
        raise UsageError(f"{source}: no such folder of Harbor tasks")
    with SourceFolder(source) as tree, tempfile.TemporaryDirectory(prefix="ssw-import-") as tmp:
        names, links = tree.folders()
        folders = [name for name in names if tree.exists(f"{name}/task.toml")]
        linked = [name for name in links if (source / name / "task.toml").is_file()]
        if not folders and not linked:
            raise UsageError(f"{source}: no task folders (a folder holding task.toml)")
        out.mkdir(parents=True, exist_ok=True)
        found = [Imported(name, None, f"{name} {LINKED_TASK}") for name in linked]
        for name in folders:
            copy = Path(tmp) / name
            try:
                tree.copy(name, copy, Allowance())
                found.append(Imported(name, import_task(copy, out)))
            except (Refused, SourceRefused, KeyError, tomllib.TOMLDecodeError) as exc:
                why = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
                found.append(Imported(name, None, why))
    return sorted(found, key=lambda task: task.name)
