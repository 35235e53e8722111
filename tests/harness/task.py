"""A scripted task end to end: the replies a loopback scripted server gives (one a model call, in
the order the machine asks), a policy, and `run_ssw`, driving the real session, HTTP client,
tools and gates (the fixture repository's own pytest suite) as `ssw run` does, and reading back
what the run left behind (`Finished`).

The sample repositories (`tests.harness.repo.sample_repo`) live in tests/fixtures/repos/:
- mean_bug: `calc.ops.mean` divides by one value too many; tests/test_ops.py fails until fixed.
- median_feature: `calc.median` does not exist; tests/test_median.py fails until it does.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomli_w
import yaml

from stepswitch.agent.prepare import PreparedRun
from stepswitch.agent.providers import HttpProviders
from stepswitch.agent.run import RunExtras, run_task
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.cli.run import RunOptions, run_local
from stepswitch.gates.runner import GateResult
from stepswitch.gates.suite import SuiteResult
from stepswitch.gates.warm import WarmPytest, WarmStarter
from stepswitch.ledger import Budget, CallRow, open_ledger
from stepswitch.policy.model import Policy
from stepswitch.records.folder import RunFolder, load_run
from stepswitch.records.run import RunIds, RunRecord
from stepswitch.records.steps import (
    GateVerdicts,
    ModelStep,
    ReviewVerdicts,
    StepEvent,
    ToolCallRecord,
)
from stepswitch.registry.presets import clear_cache, registry_dir
from tests.harness.repo import git

BUG_TASK = "calc.ops.mean divides by one value too many; make it the plain arithmetic mean."
BUG_LINE = "    return sum(values) / (len(values) + 1)"
FIX_LINE = "    return sum(values) / len(values)"
RUN_TESTS = f"{sys.executable} -m pytest -q -p no:cacheprovider"


# --- policies ---

WORKERS = {
    "small": "scripted-small",
    "mid": "scripted-mid",
    "large": "scripted-large",
    "other": "scripted-other",
}


def worker(model: str, **extra: Any) -> dict[str, Any]:
    return {
        "provider": "scripted",
        "model": model,
        "max_output_tokens": 2048,
        "timeout": 30,
        **extra,
    }


def every_worker(model: str, **extra: Any) -> dict[str, dict[str, Any]]:
    """The policy's workers, every one of them on `model` (a priced one, say)."""
    return {name: worker(model, **extra) for name in WORKERS}


# The demo's shape: cheap steps on small, planning and review on large, the work on mid, and
# the ladder mid -> large for edit, run and triage once the gates keep failing.
DEFAULT_POLICY: dict[str, Any] = {
    "workers": {name: worker(model) for name, model in WORKERS.items()},
    "rules": [
        {"when": {"step_type": ["navigate", "read", "summarize"]}, "worker": "small"},
        {"when": {"step_type": ["plan", "review"]}, "worker": "large"},
        {"when": {"step_type": ["edit", "run", "triage"], "escalations": 0}, "worker": "mid"},
    ],
    "escalation": {"after_gate_failures": 2, "ladder": ["mid", "large"]},
    "limits": {"max_steps": 40, "steps_per_rung": 30, "wall_time_s": 120},
    "review": {"reviewer": "large", "second_opinion": "other"},
}


def make_policy(**sections: Any) -> dict[str, Any]:
    """The default policy with whole top-level sections replaced, or merged when given as
    `limits={"max_steps": 3}` (tables are merged one level deep)."""
    policy = copy.deepcopy(DEFAULT_POLICY)
    for name, value in sections.items():
        if value is None:
            policy.pop(name, None)
        elif isinstance(value, dict) and isinstance(policy.get(name), dict):
            policy[name] = {**policy[name], **value}
        else:
            policy[name] = value
    return policy


def write_policy(folder: Path, policy: dict[str, Any]) -> Path:
    path = folder / "policy.toml"
    path.write_text(tomli_w.dumps(policy), encoding="utf-8")
    return path


# --- scripts: one reply per model call, in the order the machine asks ---


def _reply(expect: str | None, **fields: Any) -> dict[str, Any]:
    return {**({"expect_model": expect} if expect else {}), **fields}


def tool(name: str, *, expect: str | None = None, **arguments: Any) -> dict[str, Any]:
    """A reply with one tool call."""
    return _reply(expect, tool_calls=[{"name": name, "arguments": arguments}])


def raw_tool(name: str, arguments: str, *, expect: str | None = None) -> dict[str, Any]:
    """A reply whose tool call carries `arguments` as the literal text sent on the wire."""
    return _reply(expect, tool_calls=[{"name": name, "arguments": arguments}])


def done(summary: str = "ok", *, expect: str | None = None) -> dict[str, Any]:
    return tool("done", expect=expect, summary=summary)


def prose(text: str, *, expect: str | None = None) -> dict[str, Any]:
    return _reply(expect, content=text)


def verdict(answer: str, reasons: str = "looks right", *, expect: str | None = None) -> dict:
    return _reply(expect, content=json.dumps({"verdict": answer, "reasons": reasons}))


def explore() -> list[dict[str, Any]]:
    """plan, navigate, read and run, each answered with `done` at once."""
    return [
        done("1. Fix mean in calc/ops.py.\n2. tests/test_ops.py checks it."),
        done("calc/ops.py: defines mean\ntests/test_ops.py: its tests"),
        done("mean (line 8) divides by len(values) + 1."),
        done("tests/test_ops.py::test_mean_of_three_numbers fails: 1.5 != 2.0"),
    ]


def explore_running(
    command: str, said: str, notes: str = "mean divides by n + 1"
) -> list[dict[str, Any]]:
    """plan, navigate and read answered at once, then the run step runs `command` (a model's
    attempt to get out, plant or forge something) and says `said`."""
    return [
        done("plan"),
        done("calc/ops.py"),
        done(notes),
        tool("run", command=command),
        done(said),
    ]


def tried_plus_two() -> list[dict[str, Any]]:
    """A wrong first edit (divide by n + 2) and its triage: the gates fail once."""
    return [
        tool("edit", path="calc/ops.py", old="+ 1)", new="+ 2)"),
        done("tried + 2"),
        done("still off"),  # triage
    ]


def fix_the_bug() -> list[dict[str, Any]]:
    return [
        tool("edit", path="calc/ops.py", old=BUG_LINE, new=FIX_LINE),
        done("mean divides by len(values)."),
    ]


def approve_and_summarize(message: str = "Fix mean\n\nDivide by the count.") -> list[dict]:
    """Reviewer and second opinion approve; summarize writes the commit message."""
    return [verdict("approve"), verdict("approve"), done(message)]


def whole_fix(message: str = "Fix mean\n\nDivide by the count.") -> list[dict[str, Any]]:
    """The bug task from start to end: explore, fix the bug, approve and summarize."""
    return [*explore(), *fix_the_bug(), *approve_and_summarize(message)]


def write_script(folder: Path, replies: list[dict[str, Any]]) -> Path:
    path = folder / "script.yaml"
    path.write_text(yaml.safe_dump({"replies": replies}, sort_keys=False), encoding="utf-8")
    return path


def run_files(
    folder: Path, replies: list[dict[str, Any]], policy: dict[str, Any] | None = None
) -> list[str]:
    """`--policy P --script S` for `ssw run`: `policy` (default: make_policy()) and `replies`
    written into `folder`."""
    policy_path = write_policy(folder, policy if policy is not None else make_policy())
    return ["--policy", str(policy_path), "--script", str(write_script(folder, replies))]


def run_command(
    folder: Path,
    repo: Path,
    replies: list[dict[str, Any]],
    *more: str,
    policy: dict[str, Any] | None = None,
) -> list[str]:
    """`python -m stepswitch run REPO --task BUG_TASK --policy P --script S MORE...`, for a test
    that must hold the process (a signal, a kill, its output as it comes): run_files in
    `folder`."""
    command = [sys.executable, "-m", "stepswitch", "run", str(repo), "--task", BUG_TASK]
    return [*command, *run_files(folder, replies, policy), *more]


# --- a finished run, as the user finds it ---


@dataclass
class Finished:
    record: RunRecord  # what run_task returned
    saved: RunRecord  # run.json, read back
    events: list[StepEvent]  # steps.jsonl, read back
    lines: list[str]  # what the run printed
    repo: Path
    folder: Path = field(repr=False)

    @property
    def model_steps(self) -> list[ModelStep]:
        return self.steps

    @property
    def steps(self) -> list[ModelStep]:
        return [e for e in self.events if isinstance(e, ModelStep)]

    @property
    def gates(self) -> list[GateVerdicts]:
        return [e for e in self.events if isinstance(e, GateVerdicts)]

    @property
    def reviews(self) -> list[ReviewVerdicts]:
        return [e for e in self.events if isinstance(e, ReviewVerdicts)]

    def of(self, step_type: str) -> list[Any]:
        """Model steps of a step type; "gates" and "review_verdicts" name those events."""
        if step_type == "gates":
            return self.gates
        if step_type == "review_verdicts":
            return self.reviews
        return [s for s in self.steps if s.step_type == step_type]

    @property
    def routing(self) -> list[tuple[str, str]]:
        """Model steps as (step type, model), with gate and review verdicts as ("gates", "-")
        and ("review_verdicts", "-") where they happened."""
        out = []
        for e in self.events:
            if isinstance(e, ModelStep):
                out.append((e.step_type, e.model))
            elif isinstance(e, GateVerdicts):
                out.append(("gates", "-"))
            elif isinstance(e, ReviewVerdicts):
                out.append(("review_verdicts", "-"))
        return out

    def calls(self, name: str | None = None) -> list[ToolCallRecord]:
        return [c for s in self.steps for c in s.tool_calls if name in (None, c.name)]

    def on_branch(self, path: str) -> str:
        return git(self.repo, "show", f"{self.record.branch}:{path}")

    def branch_diff(self) -> str:
        return git(self.repo, "diff", "main", self.record.branch)

    def branch_files(self) -> list[str]:
        return git(self.repo, "diff", "--name-only", "main", self.record.branch).split()


def ledger_count(path: Path, status: str) -> int:
    """How many of the ledger's calls at `path` have `status` (0 before its schema is written);
    read while another process writes it."""
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as raw:
        try:
            query = "SELECT COUNT(*) FROM calls WHERE status = ?"
            return int(raw.execute(query, (status,)).fetchone()[0])
        except sqlite3.OperationalError:  # the schema is not written yet
            return 0


def wait_for_the_third_call(ledger: Path, process: subprocess.Popen[Any]) -> None:
    """Poll the ledger `process` (an `ssw run`) writes until two calls are settled and the third
    is reserved, in flight; fail if the run ends first or it never comes."""
    deadline = time.monotonic() + 60
    while not (ledger_count(ledger, "settled") == 2 and ledger_count(ledger, "reserved") == 1):
        assert process.poll() is None, "ssw run ended before the hanging call"
        assert time.monotonic() < deadline, "the third call never started"
        time.sleep(0.05)  # polling a file another process writes; the check is the condition


def run_ssw(
    workdir: Path,
    repo: Path,
    replies: list[dict[str, Any]],
    *,
    policy: dict[str, Any] | None = None,
    task: str = BUG_TASK,
    max_steps: int | None = None,
    budget_usd: float | None = None,
    tags: tuple[tuple[str, str], ...] = (),
    start_warm: WarmStarter = WarmPytest,
) -> Finished:
    """One full run as `ssw run` does it (run_local, then run_task), and what it left behind;
    `start_warm` starts the gates' warm pytest (a subclass that counts or records them)."""
    lines: list[str] = []
    options = RunOptions(
        repo=repo,
        task=task,
        policy_path=write_policy(workdir, policy or DEFAULT_POLICY),
        script=write_script(workdir, replies),
        max_steps=max_steps,
        budget_usd=budget_usd,
        tags=tags,
        start_warm=start_warm,
    )
    record = run_local(options, lines.append)
    loaded = load_run(repo / ".ssw" / "runs" / record.run_id)
    return Finished(record, loaded.run, loaded.steps, lines, repo, loaded.folder)


class PassingGates:
    """Gates that pass every change at once, for a run whose gates are not what it tests."""

    names = ("check",)
    description = "  gates (test): check"

    def before_edit(self) -> None:
        pass

    def run(self, changed: list[str]) -> SuiteResult:
        return SuiteResult((GateResult("check", True, 0.01, "passed", "passed"),))


def run_with_passing_gates(
    folder: Path,
    repo: Path,
    policy: Policy,
    providers: HttpProviders,
    budgets: tuple[Budget, ...],
    extras: RunExtras | None = None,
) -> tuple[RunRecord, list[CallRow]]:
    """The bug task run by run_task itself (run r1 of task t1) on `repo` with PassingGates,
    its ledger and records in `folder`: the record and the ledger's rows."""
    with open_ledger(folder / "ledger.sqlite") as ledger:
        record = run_task(
            PreparedRun(Workspace(repo), PassingGates()),
            task=BUG_TASK,
            policy=policy,
            ledger=ledger,
            folder=RunFolder(folder / "records"),
            ids=RunIds(run_id="r1", task_id="t1"),
            budgets=budgets,
            providers=providers,
            deadline=time.monotonic() + 120,
            extras=extras,
        )
        return record, ledger.rows("r1")


# --- the environment a run sees ---

# Models the shipped scripted preset does not have: one with a price (for budgets), one that
# takes reasoning efforts, "none" among them (for the cut-off-thinking retry), and a priced one
# with a small context window and output limit (for the input bounds).
WINDOWED_TOKENS = 2_000
TOOLS = ["tools", "parallel_tool_calls", "json_schema"]


def _scripted_model(usd_per_mtok: float, source: str, **fields: Any) -> dict[str, Any]:
    """A model of the scripted family, priced `usd_per_mtok` each way."""
    as_of = datetime.date(2026, 11, 29)
    price = {"input": usd_per_mtok, "output": usd_per_mtok, "source": source, "as_of": as_of}
    return {"family": "scripted", **fields, "price": price}


MADE_UP = "tests: a made-up price"
EXTRA_MODELS = "\n" + tomli_w.dumps(
    {
        "models": {
            "scripted-priced": _scripted_model(10.0, MADE_UP, capabilities=TOOLS),
            "scripted-thinker": _scripted_model(
                0.0,
                "scripted: no model is called",
                reasoning_efforts=["none", "low", "high"],
                capabilities=[*TOOLS, "reasoning"],
            ),
            "scripted-windowed": _scripted_model(
                10.0,
                MADE_UP,
                context_window=WINDOWED_TOKENS,
                max_output_tokens=4096,
                capabilities=TOOLS,
            ),
        }
    }
)


def use_extra_models(mp: pytest.MonkeyPatch, folder: Path) -> Path:
    """A copy of the registry with EXTRA_MODELS in the scripted preset, made the one in use."""
    root = folder / "registry"
    shutil.copytree(registry_dir() / "providers", root / "providers")
    with (root / "providers" / "scripted.toml").open("a", encoding="utf-8") as out:
        out.write(EXTRA_MODELS)
    mp.setenv("SSW_REGISTRY", str(root))
    clear_cache()
    return root
