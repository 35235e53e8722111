"""Tier memory (issue 26, ADR 0039), from committed SYNTHETIC run records with known answers
(tests/fixtures/synthetic_runs/, hand-made: no model and no run made them), then in a scripted
run: a run starts on the rung the repository's recent runs of its kind needed, says so, and
records which runs it read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stepswitch.agent.tier_memory import recall
from stepswitch.policy.model import validate_policy
from tests.harness.task import (
    make_policy,
    run_ssw,
    whole_fix,
)

SYNTHETIC = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic_runs"
LADDER = ("mid", "large")


def test_the_start_is_the_lowest_rung_each_recent_run_of_the_kind_needed() -> None:
    memory = recall(SYNTHETIC, "new", LADDER, "bugfix", scripted=True)
    # r-d failed, r-e is another kind, r-f another ladder, r-g older than the last three
    assert (memory.level, memory.runs, memory.levels) == (1, ["r-c", "r-b", "r-a"], [1, 1, 1])
    assert memory.why == (
        "the last 3 done runs with this ladder and task_kind 'bugfix' needed rung 1, 1, 1: "
        "starting on rung 1 (large); 1 unreadable run records left out"
    )


@pytest.mark.parametrize(
    ("kind", "scripted", "runs"),
    [("feature", True, ["r-e"]), (None, True, []), ("bugfix", False, [])],
)
def test_too_few_runs_like_this_one_start_on_rung_zero(
    kind: str | None, scripted: bool, runs: list[str]
) -> None:
    memory = recall(SYNTHETIC, "new", LADDER, kind, scripted=scripted)
    assert (memory.level, memory.runs) == (0, runs)
    assert "(needs 2): starting on rung 0" in memory.why


def test_one_recent_run_that_stayed_on_rung_zero_keeps_the_start_there(tmp_path: Path) -> None:
    for run in ("r-a", "r-b", "r-g"):
        shutil.copytree(SYNTHETIC / run, tmp_path / run)
    memory = recall(tmp_path, "new", LADDER, "bugfix", scripted=True)
    assert (memory.level, memory.levels) == (0, [1, 1, 0])  # r-g passed on rung 0


def test_ssw_policy_check_says_when_memory_is_on() -> None:
    from stepswitch.policy.check import check_policy, render_policy_check
    from stepswitch.registry.presets import load_registry

    shown = [
        render_policy_check(check_policy(validate_policy(_memory_policy(on), "p"), load_registry()))
        for on in (True, False)
    ]
    assert "tier memory: on; a run starts on the lowest rung" in shown[0]
    assert "tier memory" not in shown[1]


def _memory_policy(on: bool) -> dict:
    policy = make_policy(escalation={"memory": on})
    validate_policy(policy, "p.toml")
    return policy


def test_a_run_with_memory_starts_its_edits_on_the_rung_recent_runs_needed(
    tmp_path: Path, bug_repo: Path
) -> None:
    runs = bug_repo / ".ssw" / "runs"
    for run in ("r-a", "r-b", "r-c"):
        shutil.copytree(SYNTHETIC / run, runs / run)
    replies = whole_fix()
    ran = run_ssw(tmp_path, bug_repo, replies, policy=_memory_policy(True),
                  tags=(("task_kind", "bugfix"),))  # fmt: skip
    assert ran.record.outcome == "done"
    memory = ran.saved.tier_memory
    assert memory is not None and (memory.level, memory.runs) == (1, ["r-c", "r-b", "r-a"])
    assert {s.worker for s in ran.of("edit")} == {"large"}  # rung 1 from the first edit
    assert {s.escalation for s in ran.steps} == {1}
    assert f"tier memory: {memory.why}" in ran.lines
    from tests.test_runs_show_apply import ssw

    shown = ssw(bug_repo, "runs", "show", ran.record.run_id)
    assert f"tier memory: {memory.why}\n" in shown.stdout  # ssw runs show says it too

    (tmp_path / "off").mkdir()
    again = run_ssw(tmp_path / "off", bug_repo, replies, policy=_memory_policy(False),
                    tags=(("task_kind", "bugfix"),))  # fmt: skip
    assert again.saved.tier_memory is None
    assert {s.worker for s in again.of("edit")} == {"mid"}
