"""Inside a real run (`run_local`, the scripted provider): a gate that cannot run is refused before
the first call, and what the `run` tool does to the gates' truth (rewrite a golden file, move
a protected one) fails the gates, naming the paths."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.cli.run import RunOptions, run_local
from stepswitch.errors import ConfigError
from stepswitch.ledger import open_ledger
from tests.harness.cli import run_pytest
from tests.harness.repo import git, sample_repo
from tests.harness.task import (
    BUG_LINE,
    FIX_LINE,
    approve_and_summarize,
    done,
    explore_running,
    make_policy,
    run_ssw,
    tool,
    write_policy,
    write_script,
)

PY = shlex.quote(sys.executable)
MEAN = f"{PY} -c 'from calc.ops import mean; print(mean([1.0, 2.0, 3.0]))'"


def configure(repo: Path, gates: str, files: dict[str, str] | None = None) -> None:
    (repo / ".stepswitch.toml").write_text(gates, encoding="utf-8")
    for rel, text in (files or {}).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "gates")


def test_a_gate_that_cannot_run_refuses_the_run_before_any_call(tmp_path: Path) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    configure(repo, '[gates.lint]\ncommand = "no-such-tool-ssw check ."\n')
    options = RunOptions(
        repo=repo,
        task="Fix mean.",
        policy_path=write_policy(tmp_path, make_policy()),
        script=write_script(tmp_path, [done("never asked")]),
    )
    with pytest.raises(ConfigError) as caught:
        run_local(options, lambda line: None)
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith("gates: lint: command not found: no-such-tool-ssw (fix: ")
    ledger = open_ledger(repo / ".ssw" / "ledger.sqlite")
    try:
        assert ledger.rows() == []  # no call was made, or even reserved
    finally:
        ledger.close()
    assert list((repo / ".ssw").glob("runs/*/run.json")) == []


@pytest.mark.slow
def test_a_golden_file_rewritten_and_a_protected_file_moved_by_the_run_tool_fail_the_gates(
    tmp_path: Path,
) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    gates = (
        f'[gates.mean]\nkind = "golden"\nexpected = "golden/mean.json"\ncommand = "{MEAN}"\n\n'
        '[gates.reference]\nkind = "protected"\npaths = ["data/**"]\n'
    )
    configure(repo, gates, {"golden/mean.json": "2.0\n", "data/ref.csv": "a\n1\n"})
    forge = "printf '1.5\\n' > golden/mean.json && mv data/ref.csv ref.csv"
    same = BUG_LINE + "  # unchanged"
    replies = [
        *explore_running(forge, "made the golden file agree"),
        tool("edit", path="calc/ops.py", old=BUG_LINE, new=same),
        done("edited"),
        done("the truth check fails"),  # triage, on the last rung
        tool("edit", path="calc/ops.py", old=same, new=same + " again"),
        done("tried again"),
        *approve_and_summarize(),  # never asked for
    ]
    policy = make_policy(escalation={"after_gate_failures": 1})
    run = run_ssw(tmp_path, repo, replies, policy=policy)

    assert any("gates: mean already fails before any edit" in line for line in run.lines)
    assert (run.record.outcome, run.record.exit_code) == ("gates_failed", 1)
    [shown] = [c.output for s in run.model_steps for c in s.tool_calls if c.name == "run"]
    first = run.of("gates")[0]
    assert first.failed_gate == "ssw:protected"
    report = first.gates[0].report
    assert "golden/mean.json: modified, but it is the golden file of gate mean" in report, shown
    assert "data/ref.csv: renamed to ref.csv, but it is protected by gate reference" in report


# Bytecode compiled from the fixed source, under the name Python gives calc/ops.py's, with a header
# that matches the buggy source's time and size: Python would load it instead of the source.
PLANT = f"""{PY} - <<'EOF'
import importlib._bootstrap_external as bootstrap, importlib.util, os
source = "calc/ops.py"
stat = os.stat(source)
fixed = open(source).read().replace({BUG_LINE!r}, {FIX_LINE!r})
code = compile(fixed, os.path.abspath(source), "exec")
target = importlib.util.cache_from_source(source)
os.makedirs(os.path.dirname(target), exist_ok=True)
with open(target, "wb") as out:
    out.write(bootstrap._code_to_timestamp_pyc(code, stat.st_mtime, stat.st_size))
print(target)
EOF"""


def test_bytecode_planted_by_the_run_tool_is_not_what_the_gates_test(tmp_path: Path) -> None:
    # The control: with the bytecode planted, pytest as `ssw gates` runs it passes the buggy tree.
    control = sample_repo(tmp_path / "control", "mean_bug")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(["bash", "-c", PLANT], cwd=control, env=env, check=True, capture_output=True)
    tests = run_pytest(control, env)
    assert tests.returncode == 0, tests.stdout  # the planted bytecode is what ran
    assert BUG_LINE in (control / "calc" / "ops.py").read_text()

    repo = sample_repo(tmp_path / "repo", "mean_bug")
    replies = [
        *explore_running(PLANT, "fixed, without touching the source"),
        # The edit: a comment (the bug stays), or the run would end no_change before any gate
        # ran; the planted bytecode holds the fix.
        tool("edit", path="calc/ops.py", old=BUG_LINE, new=f"{BUG_LINE}  # see the bytecode"),
        done("the tests still fail"),  # triage, on the last rung
        tool("run", command=PLANT),
        done("tried again"),
        *approve_and_summarize(),  # never asked for
    ]
    policy = make_policy(escalation={"after_gate_failures": 1})
    run = run_ssw(tmp_path, repo, replies, policy=policy)

    # Not done: the gates tested the source, which still has the bug.
    assert (run.record.outcome, run.record.exit_code) == ("gates_failed", 1)
    [shown, _] = [c.output for s in run.model_steps for c in s.tool_calls if c.name == "run"]
    assert "calc/__pycache__/ops.cpython-" in shown  # it was planted in the worktree
    first = run.of("gates")[0]
    assert first.failed_gate is not None and first.failed_gate.startswith("tests")
    assert "test_mean" in first.gates[-1].report
