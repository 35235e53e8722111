"""Harbor tasks that ssw did not export, read as ssw tasks without running any of their scripts
(`ssw bench import harbor DIR`, for a task.toml without [metadata.ssw]; ADR 0037).

A task is taken when each of its parts has a shape whose effect can be read:
- environment/Dockerfile: `FROM python:<tag>`, `WORKDIR`, `COPY` of files of environment/ into
  the work folder, `RUN pip install` of packages (names, `name==version`, `-r FILE`), and
  `ENV PYTHON...`, `LABEL`, `CMD` as no-ops. The copied files are the start (repo/); the
  packages, pytest and its reporting plugins aside, become `requires`.
- tests/test.sh: one pytest run over files of /tests, its exit status the reward in reward.txt
  (harbor_test_sh reads it: a reward written otherwise is refused); what its `pip install` /
  `uv pip install` / `uvx --with` lines add, pytest aside, is required too. The other files
  of tests/ are the hidden tests; their string literals naming the work folder or /tests are
  made relative to the checkout and to .ssw_hidden/.
- solution/solve.sh: only writes of files: `cat > FILE <<'EOF'` (a quoted delimiter, or a body
  with nothing to expand), `cp` from /solution, `rm -f`, `mkdir -p`, `cd` to the work folder,
  `set`. Its effect, applied to the start, is the reference patch.
- the start may hold tests of its own (ssw's gates run them) or none, as most Harbor tasks:
  then the hidden tests alone judge it, and the agent's brief says so (ADR 0079).
Anything else is refused with the reason, task by task: a script is never run on import.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import tomli_w

from stepswitch.bench.harbor_shell import (
    Refused,
    file_inside,
    logical_lines,
    relative,
    requirement,
    split_words,
)
from stepswitch.bench.harbor_solution import reference_patch, solution_writes
from stepswitch.bench.harbor_test_sh import pytest_run
from stepswitch.bench.task import HIDDEN_FOLDER, load_task

_PIP = (["pip", "install"], ["pip3", "install"], ["python", "-m", "pip", "install"])
_PIP_FLAGS = {"--no-cache-dir", "-q", "--quiet", "-U", "--upgrade", "--break-system-packages"}
_NO_OP_ENV = re.compile(r"^PYTHON(UNBUFFERED|DONTWRITEBYTECODE)=\S+$")
_TASK_ID = re.compile(r"[^a-z0-9_-]+")


@dataclass
class _Image:
    root: PurePosixPath = field(default_factory=lambda: PurePosixPath("/"))
    # (a path of environment/, where it goes, whether that is a folder to copy into)
    copies: list[tuple[str, PurePosixPath, bool]] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)


def _pip_install(words: list[str], context: Path, image: _Image) -> None:
    args = next((words[len(p) :] for p in _PIP if words[: len(p)] == p), None)
    if args is None:
        raise Refused(f"environment/Dockerfile runs {' '.join(words)!r}: only pip install is read")
    where = "environment/Dockerfile"
    specs: list[str] = []
    while args:
        arg = args.pop(0)
        if arg in _PIP_FLAGS:
            continue
        if arg in ("-r", "--requirement") and args:
            file = file_inside(context, args.pop(0), where)
            lines = [line.split("#")[0].strip() for line in file.read_text("utf-8").splitlines()]
            specs += [line for line in lines if line]
        elif arg.startswith("-"):
            raise Refused(f"{where}: pip install option {arg} is not read")
        else:
            specs.append(arg)
    image.requires += [r for s in specs if (r := requirement(s, where)) is not None]


def _read_image(environment: Path) -> _Image:
    where = "environment/Dockerfile"
    dockerfile = environment / "Dockerfile"
    if not dockerfile.is_file():
        raise Refused("no environment/Dockerfile (only a plain Python image is taken)")
    if (environment / ".dockerignore").exists():
        raise Refused("environment/.dockerignore is not read: the copied files would differ")
    image, lines = _Image(), logical_lines(dockerfile.read_text("utf-8"))
    first = split_words(lines[0], where) if lines else []
    if len(first) != 2 or first[0].upper() != "FROM" or not first[1].startswith("python:"):
        raise Refused(f"{where} does not start FROM python:<tag> (only a Python image is taken)")
    for line in lines[1:]:
        instruction, _, rest = line.partition(" ")
        instruction, words = instruction.upper(), split_words(rest, where)
        if instruction == "WORKDIR" and len(words) == 1:
            image.root = image.root / words[0]
        elif instruction == "COPY" and len(words) >= 2 and not words[0].startswith("--"):
            for source in words[:-1]:
                file_inside(environment, source, where)
                into = words[-1].endswith("/") or words[-1] == "." or len(words) > 2
                image.copies.append((source, image.root / words[-1], into))
        elif instruction == "RUN":
            _pip_install(words, environment, image)
        elif instruction in ("LABEL", "CMD") or (
            instruction == "ENV" and all(_NO_OP_ENV.match(w) for w in words)
        ):
            continue  # no effect on the files or the packages
        else:
            raise Refused(
                f"{where}: {line!r} is not read (only FROM python, WORKDIR, COPY, pip install)"
            )
    if image.root == PurePosixPath("/"):
        raise Refused(f"{where} sets no WORKDIR: the agent's folder is not known")
    return image


def _lay_out_start(environment: Path, image: _Image, repo: Path) -> None:
    repo.mkdir(parents=True)
    for source, dest, into in image.copies:
        rel = relative(image.root, dest, "environment/Dockerfile")
        path = environment / source
        if path.is_symlink() or (path.is_dir() and any(p.is_symlink() for p in path.rglob("*"))):
            raise Refused(f"environment/{source} holds a link")
        if path.is_dir():  # as Docker's COPY: the folder's files, not the folder
            ignore = shutil.ignore_patterns("Dockerfile", ".git")
            shutil.copytree(path, repo / rel, dirs_exist_ok=True, ignore=ignore)
        else:
            target = repo / rel / path.name if into else repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


# --- the hidden tests ---


def _relocate(text: str, root: PurePosixPath, where: str) -> str:
    """A hidden test's literals naming the work folder or /tests, relative to the checkout."""
    for quote in ('"', "'"):
        text = text.replace(f"{quote}{root}/", quote).replace(
            f"{quote}{root}{quote}", f"{quote}.{quote}"
        )
        text = text.replace(f"{quote}/tests/", f"{quote}{HIDDEN_FOLDER}/")
    if re.search(rf"{re.escape(str(root))}\b", text):
        raise Refused(f"{where} names {root} other than as the start of a string")
    return text


# --- the task ---


def task_id(folder: Path, config: dict[str, Any]) -> str:
    name = str(config.get("task", {}).get("name", folder.name)).rpartition("/")[2]
    found = _TASK_ID.sub("-", name.lower()).strip("-_")
    if not found:
        raise Refused(f"{name!r} makes no task id")
    return found


def import_foreign(folder: Path, config: dict[str, Any], out: Path) -> Path:
    """A Harbor task ssw did not export as the ssw task out/<id>; Refused says why not."""
    image = _read_image(folder / "environment")
    if not (folder / "tests/test.sh").is_file():
        raise Refused("no tests/test.sh")
    paths, plugins = pytest_run(folder / "tests/test.sh")
    hidden_files = sorted(
        p for p in (folder / "tests").rglob("*") if p.is_file() and p.name != "test.sh"
    )
    if any(p.is_symlink() for p in (folder / "tests").rglob("*")):
        raise Refused("tests/ holds a link")
    for rel in paths:
        file_inside(folder / "tests", rel, "tests/test.sh")
    writes, removes = solution_writes(folder / "solution", image.root)
    task = task_id(folder, config)
    dest = out / task
    if dest.exists():
        raise Refused(f"{dest} exists")
    verifier = float(config.get("verifier", {}).get("timeout_sec", 300.0))
    with tempfile.TemporaryDirectory(prefix="ssw-harbor-") as tmp:
        scratch = Path(tmp)
        start = scratch / "start"
        _lay_out_start(folder / "environment", image, start)
        files = scratch / "files"
        for rel, data in writes.items():
            (files / rel).parent.mkdir(parents=True, exist_ok=True)
            (files / rel).write_bytes(data)
        files.mkdir(exist_ok=True)
        patch = reference_patch(start, files, tuple(removes), scratch / "patch")
        targets = [f"{HIDDEN_FOLDER}/{p}" for p in paths] or [HIDDEN_FOLDER]
        spec: dict[str, Any] = {
            "id": task,
            "kind": "feature",
            "tests": {
                "command": shlex.join(
                    ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *targets]
                ),
                "per_test_timeout_s": min(30.0, verifier),
                "timeout_s": verifier,
            },
            "limits": {"task_timeout_s": float(config.get("agent", {}).get("timeout_sec", 1800))},
        }
        if requires := sorted(set(image.requires + plugins)):
            spec["requires"] = requires
        try:
            shutil.copytree(start, dest / "repo")
            for file in hidden_files:
                inside = file.relative_to(folder / "tests")
                copy = dest / "tests" / inside
                copy.parent.mkdir(parents=True, exist_ok=True)
                if file.suffix != ".py":
                    shutil.copy2(file, copy)
                    continue
                where = f"tests/{inside.as_posix()}"
                copy.write_text(_relocate(file.read_text("utf-8"), image.root, where), "utf-8")
            instruction = (folder / "instruction.md").read_text("utf-8")
            (dest / "instruction.md").write_text(instruction.replace(f"{image.root}/", ""), "utf-8")
            (dest / "task.toml").write_text(
                f"# Imported from the Harbor task {folder.name} (ssw bench import harbor)\n"
                + tomli_w.dumps(spec),
                "utf-8",
            )
            (dest / "solution").mkdir()
            (dest / "solution/solution.patch").write_text(patch, "utf-8")
            load_task(dest, out.name)
        except Refused:
            shutil.rmtree(dest, ignore_errors=True)
            raise
        except Exception as exc:
            shutil.rmtree(dest, ignore_errors=True)
            raise Refused(f"not a valid ssw task once written: {exc}") from None
    return dest
