"""Harbor tasks that ssw did not export, read as ssw tasks without running any of their scripts
(`ssw bench import harbor DIR`, for a task.toml without [metadata.ssw]; ADR 0037).

A task is taken when each of its parts has a shape whose effect can be read:
- environment/Dockerfile: `FROM python:<tag>`, `WORKDIR`, `COPY` of files of environment/ into
  the work folder, `RUN pip install` of packages (names, `name==version`, `-r FILE`), and
  `ENV PYTHON...`, `LABEL`, `CMD` as no-ops. The copied files are the start (repo/); the
  packages, pytest and its reporting plugins aside, become `requires`.
- tests/test.sh: one pytest run over files of /tests, its exit status the reward in reward.txt;
  what its `pip install` / `uv pip install` / `uvx --with` lines add, pytest aside, is required
  too. The other files of tests/ are the hidden tests; their string literals naming the work folder
  or /tests are made relative to the checkout and to .ssw_hidden/.
- solution/solve.sh: only writes of files: `cat > FILE <<'EOF'` (a quoted delimiter, or a body
  with nothing to expand), `cp` from /solution, `rm -f`, `mkdir -p`, `cd` to the work folder,
  `set`. Its effect, applied to the start, is the reference patch.
- the start has visible tests of its own (ssw's gates run them).
Anything else is refused with the reason, task by task: a script is never run on import.
"""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import tomli_w

from stepswitch.bench.gitops import git
from stepswitch.bench.grading_layout import copy_tree, is_test_file
from stepswitch.bench.task import HIDDEN_FOLDER, load_task


class Refused(Exception):
    """A Harbor task this importer cannot take, and why."""


_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(==[A-Za-z0-9.+!_-]+)?$")
_PIP = (["pip", "install"], ["pip3", "install"], ["python", "-m", "pip", "install"])
_PIP_FLAGS = {"--no-cache-dir", "-q", "--quiet", "-U", "--upgrade", "--break-system-packages"}
_PYTEST_FLAGS = re.compile(r"^(-rA|-r\w+|-v+|-q|-s|-x|--tb=\w+|--color=\w+|-p|no:cacheprovider)$")
# What ssw runs the tests with already, or only reports results another way.
_NOT_REQUIRED = {"pytest", "pytest-json-ctrf"}
_NO_OP_ENV = re.compile(r"^PYTHON(UNBUFFERED|DONTWRITEBYTECODE)=\S+$")
_TASK_ID = re.compile(r"[^a-z0-9_-]+")


def _logical_lines(text: str) -> list[str]:
    """Lines with backslash continuations joined, comments and blank lines left out."""
    lines, held = [], ""
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            held += raw.rstrip()[:-1] + " "
            continue
        line = (held + raw).strip()
        held = ""
        if line and not line.startswith("#"):
            lines.append(line)
    if held.strip():
        lines.append(held.strip())
    return lines


def _split(line: str, where: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise Refused(f"{where}: cannot read {line!r}: {exc}") from None


def _requirement(spec: str, where: str) -> str | None:
    """`spec` as a requirement ssw keeps, None for pytest and the like; else refused."""
    named = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec)
    if named and named[0].lower().replace("_", "-") in _NOT_REQUIRED:
        return None  # whatever version: ssw's own pytest runs the tests
    if not _REQUIREMENT.match(spec):
        raise Refused(f"{where}: requirement {spec!r} is not a name or name==version")
    return spec


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
            file = _inside(context, args.pop(0), where)
            lines = [line.split("#")[0].strip() for line in file.read_text("utf-8").splitlines()]
            specs += [line for line in lines if line]
        elif arg.startswith("-"):
            raise Refused(f"{where}: pip install option {arg} is not read")
        else:
            specs.append(arg)
    image.requires += [r for s in specs if (r := _requirement(s, where)) is not None]


def _inside(folder: Path, rel: str, where: str) -> Path:
    path = (folder / rel).resolve()
    if not path.is_relative_to(folder.resolve()) or not path.exists():
        raise Refused(f"{where}: {rel!r} is not a file of its folder")
    return path


def _read_image(environment: Path) -> _Image:
    where = "environment/Dockerfile"
    dockerfile = environment / "Dockerfile"
    if not dockerfile.is_file():
        raise Refused("no environment/Dockerfile (only a plain Python image is taken)")
    if (environment / ".dockerignore").exists():
        raise Refused("environment/.dockerignore is not read: the copied files would differ")
    image, lines = _Image(), _logical_lines(dockerfile.read_text("utf-8"))
    first = _split(lines[0], where) if lines else []
    if len(first) != 2 or first[0].upper() != "FROM" or not first[1].startswith("python:"):
        raise Refused(f"{where} does not start FROM python:<tag> (only a Python image is taken)")
    for line in lines[1:]:
        instruction, _, rest = line.partition(" ")
        instruction, words = instruction.upper(), _split(rest, where)
        if instruction == "WORKDIR" and len(words) == 1:
            image.root = image.root / words[0]
        elif instruction == "COPY" and len(words) >= 2 and not words[0].startswith("--"):
            for source in words[:-1]:
                _inside(environment, source, where)
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


def _relative(root: PurePosixPath, dest: PurePosixPath, where: str) -> PurePosixPath:
    """`dest` relative to the work folder; refused outside it (`..` is never followed)."""
    if ".." in dest.parts or (dest != root and root not in dest.parents):
        raise Refused(f"{where}: {dest} is outside the work folder {root}")
    return dest.relative_to(root)


def _lay_out_start(environment: Path, image: _Image, repo: Path) -> None:
    repo.mkdir(parents=True)
    for source, dest, into in image.copies:
        rel = _relative(image.root, dest, "environment/Dockerfile")
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


# --- tests/test.sh ---


def _pytest_run(test_sh: Path) -> tuple[list[str], list[str]]:
    """The test paths (relative to tests/) of test.sh's one pytest run, and the packages it adds."""
    where = "tests/test.sh"
    text = test_sh.read_text("utf-8")
    if "reward.json" in text or "reward.txt" not in text:
        raise Refused(f"{where} does not write its reward as reward.txt")
    runs, plugins = [], []
    for line in _logical_lines(text):
        words = _split(line, where) if "<<" not in line else line.split()
        installer = words[: words.index("install")] if "install" in words else []
        if any(w in ("pip", "pip3", "uv") for w in installer):  # the tests' own packages
            specs = [w for w in words[len(installer) + 1 :] if not w.startswith("-")]
            plugins += [r for spec in specs if (r := _requirement(spec, where)) is not None]
        elif "pytest" in words:
            runs.append(words)
        elif words[0] in ("python", "python3"):
            raise Refused(f"{where} runs Python beside pytest ({line[:60]!r}): a scored reward")
    if len(runs) != 1:
        raise Refused(
            f"{where} runs pytest {len(runs)} times: only one run, its exit status the "
            "reward, is read"
        )
    words = runs[0]
    before, after = words[: words.index("pytest")], words[words.index("pytest") + 1 :]
    for flag, value in itertools.pairwise(before):
        if flag in ("-w", "--with"):
            plugins += [r for r in [_requirement(value, where)] if r is not None]
    paths, args = [], list(after)
    while args:
        arg = args.pop(0)
        if arg.startswith("/tests/"):
            paths.append(arg.removeprefix("/tests/"))
        elif arg == "--ctrf" and args:
            args.pop(0)
        elif not _PYTEST_FLAGS.match(arg):
            raise Refused(f"{where}: pytest argument {arg!r} is not read")
    return paths, plugins


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


# --- solution/solve.sh ---


def _solution_writes(solution: Path, root: PurePosixPath) -> tuple[dict[str, bytes], list[str]]:
    """The files solve.sh writes (path relative to the work folder -> bytes) and removes."""
    where = "solution/solve.sh"
    solve = solution / "solve.sh"
    if not solve.is_file():
        raise Refused("no solution/solve.sh")
    writes: dict[str, bytes] = {}
    removes: list[str] = []

    def target(path: str) -> str:
        dest = PurePosixPath(path) if path.startswith("/") else root / path
        return _relative(root, dest, where).as_posix()

    lines = solve.read_text("utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        heredoc = re.fullmatch(
            r"cat\s+(?:>\s*(\S+)\s+<<-?\s*(['\"]?)(\w+)\2|<<-?\s*(['\"]?)(\w+)\4\s*>\s*(\S+))", line
        )
        if heredoc:
            path = heredoc[1] or heredoc[6]
            quoted, end = (heredoc[2], heredoc[3]) if heredoc[1] else (heredoc[4], heredoc[5])
            body = []
            while i < len(lines) and lines[i].strip() != end:
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise Refused(f"{where}: the text for {path} has no end line {end}")
            i += 1
            text = "\n".join(body) + "\n"
            if not quoted and re.search(r"[$`\\]", text):
                raise Refused(f"{where}: the text for {path} expands variables (quote its {end})")
            writes[target(path)] = text.encode("utf-8")
            continue
        words = _split(line, where)
        if words[0] == "set" or words == ["cd", str(root)]:
            continue
        if words[:2] == ["mkdir", "-p"]:
            for path in words[2:]:
                target(path)  # inside the work folder; the folders come with their files
            continue
        if words[0] == "rm" and len(words) >= 3 and words[1] in ("-f", "-rf"):
            for path in words[2:]:
                rel = target(path)
                removes.append(rel)
                writes.pop(rel, None)
            continue
        if words[0] == "cp" and len(words) in (3, 4) and words[-2].startswith("/solution/"):
            _copy_from_solution(solution, words, target, writes)
            continue
        raise Refused(f"{where} runs {line[:60]!r}: only writes of files are read")
    if not writes and not removes:
        raise Refused(f"{where} writes no file")
    return writes, removes


def _copy_from_solution(
    solution: Path, words: list[str], target: Any, writes: dict[str, bytes]
) -> None:
    """`cp FILE DEST` (DEST a file, or a folder ending in /) or `cp -r|-a DIR/. DEST` (the
    folder's files into DEST), FILE and DIR in /solution."""
    where = "solution/solve.sh"
    flags, source_arg, dest_arg = words[1:-2], words[-2], words[-1]
    source = _inside(solution, source_arg.removeprefix("/solution/"), where)
    dest = target(dest_arg)
    if source.is_file() and not flags:
        into = dest_arg.endswith("/") or dest == "."
        writes[f"{dest}/{source.name}".removeprefix("./") if into else dest] = source.read_bytes()
        return
    if source.is_dir() and flags in (["-r"], ["-a"], ["-R"]) and source_arg.endswith("/."):
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            rel = file.relative_to(source).as_posix()
            writes[f"{dest}/{rel}".removeprefix("./")] = file.read_bytes()
        return
    raise Refused(f"{where}: {' '.join(words)!r} is not a copy of a file or of DIR/. it reads")


def reference_patch(repo: Path, files: Path, deletions: tuple[str, ...], scratch: Path) -> str:
    """The reference as `git diff` output: repo/ with `files` over it and `deletions` made."""
    tree = scratch / "tree"
    copy_tree(repo, tree)
    git(tree, "init", "-q")
    git(tree, "add", "-A")
    git(tree, "-c", "user.name=ssw", "-c", "user.email=ssw@localhost", "commit", "-qm", "start")
    shutil.copytree(files, tree, dirs_exist_ok=True)
    for rel in deletions:
        path = tree / rel
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    git(tree, "add", "-A")
    return git(tree, "diff", "--cached", "--binary")


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
    paths, plugins = _pytest_run(folder / "tests/test.sh")
    hidden_files = sorted(
        p for p in (folder / "tests").rglob("*") if p.is_file() and p.name != "test.sh"
    )
    if any(p.is_symlink() for p in (folder / "tests").rglob("*")):
        raise Refused("tests/ holds a link")
    for rel in paths:
        _inside(folder / "tests", rel, "tests/test.sh")
    writes, removes = _solution_writes(folder / "solution", image.root)
    task = task_id(folder, config)
    dest = out / task
    if dest.exists():
        raise Refused(f"{dest} exists")
    verifier = float(config.get("verifier", {}).get("timeout_sec", 300.0))
    with tempfile.TemporaryDirectory(prefix="ssw-harbor-") as tmp:
        scratch = Path(tmp)
        start = scratch / "start"
        _lay_out_start(folder / "environment", image, start)
        if not any(is_test_file(p.relative_to(start)) for p in start.rglob("*") if p.is_file()):
            raise Refused(
                "the image's files hold no tests: an ssw task's start has visible "
                "tests, which its gates run"
            )
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
