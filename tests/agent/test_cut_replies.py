"""Replies cut at the output cap (issue 45, ADR 0062): named in the step's record and line, not
filed as prose; the step is asked again at twice the cap, its cut tool calls never run; the
third cut reply of a run stops it (`limit`) with a reason that says so. The models are SCRIPTED."""

from __future__ import annotations

from pathlib import Path

from stepswitch.cli.render import format_step
from tests.harness.task import (
    BUG_LINE,
    approve_and_summarize,
    done,
    explore,
    fix_the_bug,
    run_ssw,
    tool,
)

CUT = {"content": "1. read calc/ops.py 2. chan", "finish_reason": "length"}
# A cut reply whose tool call would have edited the file: it must not run.
CUT_EDIT = tool("edit", path="calc/ops.py", old="len(values) + 1", new="0") | {
    "finish_reason": "length"
}


def test_a_cut_reply_is_named_and_asked_again_and_the_run_goes_on(tmp_path: Path, bug_repo: Path):
    plan, *rest = explore()
    replies = [CUT, plan, *rest, CUT_EDIT, *fix_the_bug(), *approve_and_summarize()]
    run = run_ssw(tmp_path, bug_repo, replies)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.lines
    plans = run.of("plan")
    assert [s.model_output_failure for s in plans] == ["cut_at_output_cap", None]
    assert "cut_at_output_cap" in format_step(plans[0])  # the step line names it
    first_edit = run.of("edit")[0]
    assert first_edit.model_output_failure == "cut_at_output_cap"
    assert first_edit.tool_calls == []  # the cut edit never ran
    assert not any("prose" in (s.model_output_failure or "") for s in run.steps)


def test_the_third_cut_reply_stops_the_run_saying_so(tmp_path: Path, bug_repo: Path):
    plan, *rest = explore()
    replies = [CUT, plan, *rest, CUT_EDIT, CUT_EDIT, done("x")]
    run = run_ssw(tmp_path, bug_repo, replies)

    assert (run.record.outcome, run.record.exit_code) == ("limit", 1), run.lines
    assert run.record.reason.startswith("3 replies were cut at the output cap (the last on ")
    assert "raise that worker's max_output_tokens" in run.record.reason
    assert BUG_LINE in (bug_repo / "calc" / "ops.py").read_text()
