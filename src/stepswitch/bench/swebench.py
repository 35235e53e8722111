"""`ssw bench import swebench FILE --repo PATH --out DIR`: SWE-bench-style instances as tasks.

FILE holds instances as SWE-bench ships them (a JSON object, a JSON list or JSON lines), each
with instance_id, repo, base_commit, patch (the reference fix), test_patch, FAIL_TO_PASS and
PASS_TO_PASS (lists of pytest ids, or JSON-encoded strings of such lists), problem_statement and,
optionally, requirements (`name` or `name==version`). PATH is the user's clone of the project:
nothing is fetched. Each instance becomes a task (ADR 0079):
- repo/ is the clone's tree at base_commit (checked out into a folder of ours), its own tests
  visible;
- tests/ holds the files test_patch adds or changes, as they are once it is applied, at their
  paths: grading lays them over the graded tree (`overlay`), so the agent never sees them;
- task.toml grades by exactly the FAIL_TO_PASS and PASS_TO_PASS ids (`fail_to_pass`,
  `pass_to_pass`), its command running pytest over their files;
- instruction.md is problem_statement, solution/solution.patch is patch.
An instance this cannot take (its base commit not in the clone, a patch that does not apply
there, an id whose file is in neither the base commit nor the test patch or whose test that file
does not define, a test patch that deletes or renames a file) is refused with its reason; the
others are written. Nothing of the project is run here: `ssw bench validate` runs the tests.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stepswitch.bench.grading_layout import copy_tree
from stepswitch.bench.grading_timeout import backstop_s
from stepswitch.bench.imported_task import write_task_folder
from stepswitch.bench.task import GRADED_ID, Requirement, load_task
from stepswitch.errors import SswError, UsageError
from stepswitch.util.config_model import dotted, first_error
from stepswitch.util.git import run_git
from stepswitch.util.python_ast import parse_python
from stepswitch.util.text import first_line

_TASK_ID = re.compile(r"[^a-z0-9_-]+")
PER_TEST_S = 30.0
PYTEST_ID = re.compile(GRADED_ID)
Text = Annotated[str, Field(min_length=1)]


class Instance(BaseModel):
    """One SWE-bench instance as read; the fields SWE-bench adds beyond these are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    instance_id: Text
    repo: Text
    base_commit: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{4,64}$")]
    patch: Text
    test_patch: Text
    FAIL_TO_PASS: Annotated[list[str], Field(min_length=1)]
    PASS_TO_PASS: list[str] = []
    problem_statement: Text
    requirements: list[Requirement] = []

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _decoded(cls, value: Any) -> Any:
        """SWE-bench ships the id lists as JSON-encoded strings."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"a string that is no JSON list ({exc.msg})") from None
        return value

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS")
    @classmethod
    def _pytest_ids(cls, value: list[str]) -> list[str]:
        for node in value:
            if not PYTEST_ID.match(node):
                raise ValueError(
                    f"{node!r} is not a pytest id (path/test_x.py::test_y): only projects "
                    "tested by pytest are taken"
                )
        return value


@dataclass(frozen=True)
class Imported:
    name: str
    why: str = ""  # why it was refused; "" when written
    folder: Path | None = None


class Refused(Exception):
    """Why one instance cannot be a task."""


def read_instances(file: Path) -> list[dict[str, Any]]:
    """The instances of a JSON or JSON-lines file, each a JSON object; UsageError naming the
    line when it is not."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{file}: cannot read it ({exc})") from None
    try:
        whole = json.loads(text)
        found = whole if isinstance(whole, list) else [whole]
    except json.JSONDecodeError:
        found = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                found.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UsageError(f"{file} line {n} is not JSON ({exc.msg})") from None
    if not found:
        raise UsageError(f"{file} holds no instance")
    for n, item in enumerate(found, start=1):
        if not isinstance(item, dict):
            raise UsageError(f"{file}: instance {n} is not a JSON object")
    return found


def _start(clone: Path, commit: str, dest: Path, scratch: Path) -> None:
    """The clone's tree at `commit` in dest (new), as a checkout writes it: read into an index
    of our own and checked out from it under dest (`git archive` would rewrite export-subst
    files), nothing of the clone changed."""
    found = run_git(clone, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if found.status != 0:
        raise Refused(
            f"base commit {commit} is not in the clone at {clone}: fetch it there "
            f"(git fetch origin {commit})"
        )
    index = scratch / "start.index"
    for args in (("read-tree", commit), ("checkout-index", "-a", f"--prefix={dest}/")):
        done = run_git(clone, *args, index=index)
        if done.status != 0:
            raise Refused(f"git {args[0]} {commit}: {first_line(done.err)}")


def _apply(tree: Path, patch: str, what: str, scratch: Path) -> None:
    """`patch` applied to `tree` (a folder made its own git repository for the purpose)."""
    file = scratch / f"{what.replace(' ', '-')}.patch"
    file.write_text(patch, encoding="utf-8")
    done = run_git(tree, "apply", "--whitespace=nowarn", str(file))
    if done.status != 0:
        raise Refused(f"the {what} does not apply at the base commit: {first_line(done.err)}")


def _touched(tree: Path, patch: str, scratch: Path) -> list[str]:
    """The paths the test patch changes or adds; Refused when it deletes or renames one."""
    file = scratch / "touched.patch"
    file.write_text(patch, encoding="utf-8")
    done = run_git(tree, "apply", "--numstat", "-z", str(file))
    if done.status != 0:
        raise Refused(f"the test patch cannot be read: {first_line(done.err)}")
    paths = []
    for entry in done.out.split("\0"):
        if not entry:
            continue
        path = entry.split("\t")[-1]
        if not path:  # -z writes a rename as an empty path and the two names after it
            raise Refused("the test patch renames a file: not taken")
        paths.append(path)
    return paths


def _defines(module: ast.Module, names: list[str]) -> bool:
    """Whether the module defines the test `names` (a class, then a function in it, as pytest's
    id spells them), each name a def, a class or an assignment of it; a name missing from a
    class with bases may be inherited, and is taken."""
    scope: list[ast.stmt] = module.body
    inherits = False
    for name in names:
        inner: ast.stmt | None = None
        for node in scope:
            defines = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            if isinstance(node, defines) and node.name == name:
                inner = node
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                return True  # a test made by assignment: what it holds is not read
        if inner is None:
            return inherits
        inherits = isinstance(inner, ast.ClassDef) and bool(inner.bases)
        scope = inner.body if isinstance(inner, ast.ClassDef) else []
    return True


def _check_ids(which: str, ids: list[str], tested: Path) -> None:
    """Each id's file is in the tested tree and defines its test; Refused naming the first
    that is not."""
    modules: dict[str, ast.Module] = {}
    for node in ids:
        path, _, rest = node.partition("::")
        file = tested / path
        if not file.is_file():
            raise Refused(
                f"{which} id {node!r}: no file {path} at the base commit or in the test patch"
            )
        if path not in modules:
            try:
                modules[path] = parse_python(file.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError) as exc:
                raise Refused(f"{which} id {node!r}: {path} cannot be read ({exc})") from None
        names = rest.partition("[")[0].split("::")
        if not _defines(modules[path], names):
            raise Refused(f"{which} id {node!r}: {path} defines no test {'::'.join(names)}")


def task_id(instance_id: str) -> str:
    found = _TASK_ID.sub("-", instance_id.lower()).strip("-_")
    if not found:
        raise Refused(f"{instance_id!r} makes no task id")
    return found


def _task_toml(instance: Instance, name: str) -> str:
    ids = [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]
    files = list(dict.fromkeys(node.partition("::")[0] for node in ids))
    spec: dict[str, Any] = {
        "id": name,
        "kind": "bugfix",
        "tests": {
            "command": " ".join(["python -m pytest -q -p no:cacheprovider", *files]),
            "per_test_timeout_s": PER_TEST_S,
            # Each test may run to its wall-clock backstop, the limit validate warns below.
            "timeout_s": max(900.0, backstop_s(len(ids), PER_TEST_S)),
            "overlay": True,
            "fail_to_pass": instance.FAIL_TO_PASS,
            **({"pass_to_pass": instance.PASS_TO_PASS} if instance.PASS_TO_PASS else {}),
        },
        "limits": {"task_timeout_s": 1800.0},
        **({"requires": instance.requirements} if instance.requirements else {}),
    }
    comment = (
        f"# SWE-bench instance {instance.instance_id} of {instance.repo} at "
        f"{instance.base_commit} (ssw bench import swebench)\n"
    )
    return comment + tomli_w.dumps(spec)


def import_instance(instance: Instance, clone: Path, out: Path) -> Path:
    """One instance as the task out/<id>; Refused says why not, and leaves nothing there."""
    name = task_id(instance.instance_id)
    dest = out / name
    if dest.exists():
        raise Refused(f"{dest} exists: import into an empty folder")
    with tempfile.TemporaryDirectory(prefix="ssw-swebench-") as tmp:
        scratch = Path(tmp)
        start, tested, fixed = scratch / "start", scratch / "tested", scratch / "fixed"
        _start(clone, instance.base_commit, start, scratch)
        for tree in (tested, fixed):
            copy_tree(start, tree)
            run_git(tree, "init", "-q")  # its own repository: git apply works at its top
        touched = _touched(tested, instance.test_patch, scratch)
        _apply(tested, instance.test_patch, "test patch", scratch)
        _apply(fixed, instance.patch, "patch", scratch)
        _check_ids("FAIL_TO_PASS", instance.FAIL_TO_PASS, tested)
        _check_ids("PASS_TO_PASS", instance.PASS_TO_PASS, tested)
        hidden = [rel for rel in touched if (tested / rel).is_file()]
        if len(hidden) != len(touched):
            gone = sorted(set(touched) - set(hidden))
            raise Refused(f"the test patch deletes {', '.join(gone)}: not taken")
        try:
            copy_tree(start, dest / "repo")
            for rel in hidden:
                (dest / "tests" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(tested / rel, dest / "tests" / rel)
            write_task_folder(
                dest,
                {
                    "task.toml": _task_toml(instance, name),
                    "instruction.md": instance.problem_statement.rstrip() + "\n",
                    "solution/solution.patch": instance.patch,
                },
            )
            load_task(dest, out.name)  # what was written is a task ssw takes
        except (SswError, OSError) as exc:
            shutil.rmtree(dest, ignore_errors=True)
            raise Refused(f"not a valid ssw task once written: {exc}") from None
    return dest


def import_swebench(file: Path, clone: Path, out: Path) -> list[Imported]:
    """Every instance of `file` as a task under `out`, from the clone at `clone`."""
    if not clone.is_dir() or run_git(clone, "rev-parse", "--git-dir").status != 0:
        raise UsageError(f"--repo {clone}: not a git clone of the project")
    found = []
    for n, data in enumerate(read_instances(file), start=1):
        shown = str(data.get("instance_id") or f"instance {n}")
        try:
            instance = Instance.model_validate(data)
        except ValidationError as exc:
            first = first_error(exc)
            problem = str(first["msg"]).removeprefix("Value error, ")  # our own validator's
            found.append(Imported(shown, f"{dotted(first['loc'])}: {problem}"))
            continue
        try:
            found.append(Imported(shown, "", import_instance(instance, clone, out)))
        except Refused as why:
            found.append(Imported(shown, str(why)))
    return found
