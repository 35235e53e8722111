"""The step machine as a user watches it: full scripted runs through run_task, the real HTTP
client against the loopback scripted server, the real tools on a git worktree, and the sample
repository's own pytest suite as the gate. Nothing here is mocked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stepswitch.agent.workspace.apply import apply_refusals
from stepswitch.gates.runner import run_gate
from stepswitch.gates.warm import WarmPytest
from stepswitch.records.steps import Escalation
from stepswitch.registry.presets import clear_cache
from tests.harness.repo import git, sample_repo
from tests.harness.task import (
    BUG_LINE,
    FIX_LINE,
    RUN_TESTS,
    Finished,
    approve_and_summarize,
    done,
    explore,
    fix_the_bug,
    make_policy,
    prose,
    raw_tool,
    run_ssw,
    tool,
    tried_plus_two,
    use_extra_models,
    verdict,
    whole_fix,
    worker,
)

# --- whole tasks ---

MEDIAN = '''"""The middle of a list of numbers."""


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
'''


def test_a_feature_is_a_new_module_plus_an_edit_and_the_tests_that_need_it_pass(
    tmp_path: Path, feature_repo: Path
):
    replies = [
        *explore(),
        tool("write_file", path="calc/median.py", content=MEDIAN),
        tool(
            "edit",
            path="calc/__init__.py",
            old='"""Small arithmetic helpers."""',
            new='"""Small arithmetic helpers."""\n\nfrom calc.median import median\n\n'
            '__all__ = ["median"]',
        ),
        done("calc/median.py: median; calc exports it."),
        *approve_and_summarize("Add calc.median"),
    ]
    run = run_ssw(tmp_path, feature_repo, replies, task="Add calc.median; tests/test_median.py")

    assert (run.record.outcome, run.record.exit_code) == ("done", 0)
    assert [c.output.split(" (")[0] for c in run.calls("write_file")] == ["Created calc/median.py"]
    assert [g.note for g in run.of("gates")] == ["passed"]
    assert run.branch_files() == ["calc/__init__.py", "calc/median.py"]
    assert run.on_branch("calc/median.py") == MEDIAN
    assert "from calc.median import median" in run.on_branch("calc/__init__.py")
    assert not (feature_repo / "calc" / "median.py").exists()


# --- routing ---

# One model per step type: the shipped scripted models and ids the provider accepts anyway.
ROUTED = {
    "plan": "scripted-large",
    "navigate": "scripted-small",
    "read": "scripted-reader",
    "run": "scripted-runner",
    "edit": "scripted-mid",
    "triage": "scripted-triager",
    "review": "scripted-reviewer",
    "summarize": "scripted-writer",
}
ROUTING_POLICY = make_policy(
    workers={
        **{step: worker(model) for step, model in ROUTED.items()},
        "other": worker("scripted-other"),
    },
    rules=[{"when": {"step_type": [step]}, "worker": step} for step in ROUTED],
    escalation={"after_gate_failures": 3, "ladder": ["edit"]},
    review={"reviewer": "review", "second_opinion": "other"},
)


def test_each_step_type_goes_to_the_model_its_policy_names(tmp_path: Path, bug_repo: Path):
    m = ROUTED
    replies = [
        done("plan", expect=m["plan"]),
        done("calc/ops.py", expect=m["navigate"]),
        done("mean divides by n + 1", expect=m["read"]),
        done("one test fails", expect=m["run"]),
        tool("edit", path="calc/ops.py", old="+ 1)", new="+ 2)", expect=m["edit"]),
        done("changed the divisor", expect=m["edit"]),
        done("the divisor must be len(values)", expect=m["triage"]),
        tool(
            "edit", path="calc/ops.py", old="(len(values) + 2)", new="len(values)", expect=m["edit"]
        ),
        done("divide by len(values)", expect=m["edit"]),
        verdict("approve", expect=m["review"]),
        verdict("approve", expect="scripted-other"),
        done("Fix mean", expect=m["summarize"]),
    ]
    run = run_ssw(tmp_path, bug_repo, replies, policy=ROUTING_POLICY)

    assert run.record.outcome == "done", run.lines
    assert run.routing == [
        ("plan", m["plan"]),
        ("navigate", m["navigate"]),
        ("read", m["read"]),
        ("run", m["run"]),
        ("edit", m["edit"]),
        ("edit", m["edit"]),
        ("gates", "-"),
        ("triage", m["triage"]),
        ("edit", m["edit"]),
        ("edit", m["edit"]),
        ("gates", "-"),
        ("review", m["review"]),
        ("review", "scripted-other"),
        ("review_verdicts", "-"),
        ("summarize", m["summarize"]),
    ]
    assert [s.worker for s in run.of("review")] == ["review", "other"]


def test_a_call_routed_to_the_wrong_model_fails_the_run_and_says_why(
    tmp_path: Path, bug_repo: Path
):
    replies = [done("plan", expect="scripted-small"), *explore()[1:]]  # plan goes to large
    run = run_ssw(tmp_path, bug_repo, replies, policy=ROUTING_POLICY)

    assert (run.record.outcome, run.record.exit_code) == ("error", 1)
    assert "expects model 'scripted-small'" in run.record.reason
    assert "expects model 'scripted-small'" in (run.steps[0].error or "")


# --- escalation ---


def test_after_two_failed_gates_the_next_rung_takes_over_and_its_fix_passes(
    tmp_path: Path, bug_repo: Path
):
    replies = [
        *explore(),
        tool("edit", path="calc/ops.py", old="+ 1)", new="+ 2)", expect="scripted-mid"),
        done("tried + 2", expect="scripted-mid"),
        done("still off", expect="scripted-mid"),  # triage on rung 0
        tool("edit", path="calc/ops.py", old="+ 2)", new="+ 3)", expect="scripted-mid"),
        done("tried + 3", expect="scripted-mid"),
        done("the + n is the bug", expect="scripted-large"),  # triage on rung 1
        tool("edit", path="calc/ops.py", old="(len(values) + 3)", new="len(values)"),
        done("divide by len(values)", expect="scripted-large"),
        *approve_and_summarize(),
    ]
    run = run_ssw(tmp_path, bug_repo, replies)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.lines
    assert [(s.model, s.escalation) for s in run.of("edit")] == [
        ("scripted-mid", 0),
        ("scripted-mid", 0),
        ("scripted-mid", 0),
        ("scripted-mid", 0),
        ("scripted-large", 1),
        ("scripted-large", 1),
    ]
    assert [(g.note, g.gates[0].passed) for g in run.of("gates")] == [
        ("failed: tests:covered", False),  # the test that ran the changed line, alone first
        ("failed: tests:covered", False),
        ("passed", True),
    ]
    assert "test_mean_of_three_numbers" in run.of("gates")[0].gates[0].report
    assert (run.saved.totals.escalations, run.saved.totals.gate_failures) == (1, 2)
    assert any("escalation 1: the gates failed 2 times on rung 0" in line for line in run.lines)
    assert FIX_LINE in run.on_branch("calc/ops.py")


def test_each_gate_run_forks_from_a_warm_pytest_and_none_is_started_after_the_last(
    tmp_path: Path, bug_repo: Path
):
    started: list[WarmPytest] = []

    class CountedWarmPytest(WarmPytest):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    replies = [
        *explore(),
        *tried_plus_two(),
        tool("edit", path="calc/ops.py", old="(len(values) + 2)", new="len(values)"),
        done("divide by len(values)"),
        *approve_and_summarize(),
    ]
    run = run_ssw(tmp_path, bug_repo, replies, start_warm=CountedWarmPytest)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.lines
    assert [g.note for g in run.of("gates")] == ["failed: tests:covered", "passed"]
    assert not any("fresh pytest" in g.report for e in run.of("gates") for g in e.gates)
    # One for each gate run (the pre-flight's, then one as the second edit began); none after
    # the passing run, which review and summary follow.
    assert len(started) == 2


def _what_ran(env: dict[str, str]) -> str:
    """What a request to the warm pytest ran: the collection, the call map's trace, a stage."""
    if "--collect-only" in env.get("PYTEST_ADDOPTS", ""):
        return "collect"
    spec = json.loads(Path(env["SSW_SELECT"]).read_text(encoding="utf-8"))
    return "trace" if spec.get("calls") else "stage"


def test_the_pre_flight_collects_and_traces_in_the_warm_pytest_the_first_gate_run_forks_from(
    tmp_path: Path, bug_repo: Path, monkeypatch: pytest.MonkeyPatch
):
    servers: list[list[str]] = []  # per warm pytest started, what it ran, in order

    class RecordingWarmPytest(WarmPytest):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.ran: list[str] = []
            servers.append(self.ran)

        def run(self, args: list[str], env: Any, timeout_s: float, output_cap: int) -> Any:
            done = super().run(args, env, timeout_s, output_cap)
            if done is not None:
                self.ran.append(_what_ran(dict(env)))
            return done

    fresh: list[str] = []  # the tests gate's pytests that ran as processes of their own
    real_run_gate = run_gate

    def counted_run_gate(gate: Any, *args: Any, **kwargs: Any) -> Any:
        if gate.name.startswith("tests"):
            fresh.append(gate.name)
        return real_run_gate(gate, *args, **kwargs)

    monkeypatch.setattr("stepswitch.gates.context.run_gate", counted_run_gate)
    monkeypatch.setattr("stepswitch.gates.callmap_tracer.run_gate", counted_run_gate)
    run = run_ssw(tmp_path, bug_repo, whole_fix(), start_warm=RecordingWarmPytest)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.lines
    assert [g.note for g in run.of("gates")] == ["passed"]
    collect = run.record.baseline_gates[-1]
    assert (collect.name, collect.passed) == ("tests:collect", True)
    assert collect.report.startswith("tests:collect: collected "), collect.report
    assert any("tests traced at" in line for line in run.lines), run.lines
    # One server: the pre-flight's collection and trace, then the gate run's stages; not one
    # pytest of the tests gate started on its own.
    assert len(servers) == 1 and servers[0][:2] == ["collect", "trace"], servers
    assert set(servers[0][2:]) == {"stage"}, servers
    assert fresh == []


def test_when_the_last_rung_fails_too_the_run_stops_and_keeps_the_partial_change(
    tmp_path: Path, bug_repo: Path
):
    replies = [
        *explore(),
        tool("edit", path="calc/ops.py", old="+ 1)", new="+ 2)", expect="scripted-mid"),
        done("tried + 2"),
        done("still off", expect="scripted-large"),  # triage, already on rung 1
        tool("edit", path="calc/ops.py", old="+ 2)", new="+ 3)", expect="scripted-large"),
        done("tried + 3"),
        *approve_and_summarize(),  # never asked for
    ]
    policy = make_policy(escalation={"after_gate_failures": 1})
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy)

    assert (run.record.outcome, run.record.exit_code) == ("gates_failed", 1)
    assert "no rung is left" in run.record.reason
    assert run.saved.outcome == "gates_failed"
    assert [g.note for g in run.of("gates")] == ["failed: tests:covered", "failed: tests:covered"]
    assert run.of("review") == [] and run.of("summarize") == []
    # Nothing is lost: the last attempt is committed on the branch, marked unfinished.
    assert "(len(values) + 3)" in run.on_branch("calc/ops.py")
    assert run.branch_files() == ["calc/ops.py"]
    message = git(run.repo, "log", "-1", "--format=%B", run.record.branch)
    assert message.startswith("ssw: unfinished (gates_failed)")


# --- tolerant tool calls and refusals, each inside a run that goes on ---


@pytest.fixture(scope="module")
def tolerant_run(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """One run whose tool calls come in the shapes models often send them."""
    docstring = '    """The arithmetic mean of values; 0.0 for no values."""'
    better = '    """The arithmetic mean of values (0.0 when there are none)."""'
    replies = [
        done("plan"),
        done("calc/ops.py"),
        tool("read", path="/repo/calc/ops.py"),
        done("mean divides by n + 1"),
        tool("run", command="cd calc && ls"),
        done("ops.py is there"),
        # read's line numbers copied into old and new
        tool("edit", path="calc/ops.py", old=f"     8\t{BUG_LINE}", new=f"     8\t{FIX_LINE}"),
        # the arguments object sent as a JSON string, with a container path
        raw_tool(
            "edit",
            json.dumps(
                json.dumps({"path": "/workspace/calc/ops.py", "old": docstring, "new": better})
            ),
        ),
        done("fixed"),
        *approve_and_summarize(),
    ]
    work = tmp_path_factory.mktemp("tolerant")
    return run_ssw(work, sample_repo(work / "repo", "mean_bug"), replies)


def test_tolerated_tool_calls_let_the_run_finish(tolerant_run: Finished):
    assert (tolerant_run.record.outcome, tolerant_run.record.exit_code) == ("done", 0)
    assert all(c.ok and not c.refused for c in tolerant_run.calls())


def test_line_numbers_copied_from_read_into_edit_are_stripped(tolerant_run: Finished):
    first_edit = tolerant_run.calls("edit")[0]
    assert first_edit.ok and first_edit.output.startswith("Edited calc/ops.py")
    code = tolerant_run.on_branch("calc/ops.py")
    assert FIX_LINE + "\n" in code and "\t" not in code


def test_edit_arguments_sent_as_a_json_string_are_unwrapped(tolerant_run: Finished):
    second_edit = tolerant_run.calls("edit")[1]
    assert second_edit.arguments.startswith('"')  # recorded as the model sent them
    assert second_edit.ok
    assert "(0.0 when there are none)" in tolerant_run.on_branch("calc/ops.py")


def test_repo_and_workspace_paths_mean_the_repository_root(tolerant_run: Finished):
    read = tolerant_run.calls("read")[0]
    assert json.loads(read.arguments)["path"] == "/repo/calc/ops.py"
    assert read.ok and BUG_LINE in read.output
    assert tolerant_run.calls("edit")[1].output.startswith("Edited calc/ops.py")


def test_a_leading_cd_in_run_runs_the_command_in_that_folder(tolerant_run: Finished):
    run = tolerant_run.calls("run")[0]
    assert run.exit_code == 0
    assert "ops.py" in run.output and "__init__.py" in run.output


@pytest.fixture(scope="module")
def refused_run(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """One run whose model makes three mistakes, each refused, and carries on."""
    replies = [
        done("plan"),
        tool("edit", path="calc/ops.py", old="+ 1)", new=")"),  # edit while navigating
        done("calc/ops.py"),
        tool("read", path="../outside.txt"),
        done("mean divides by n + 1"),
        tool("run", command=RUN_TESTS),
        done("one test fails"),
        tool("edit", path="calc/ops.py", old=BUG_LINE.replace("+", "-"), new=FIX_LINE),
        *fix_the_bug(),
        *approve_and_summarize(),
    ]
    work = tmp_path_factory.mktemp("refused")
    (work / "outside.txt").write_text("a secret next to the repository\n")
    return run_ssw(work, sample_repo(work / "repo", "mean_bug"), replies)


def _refusal(run: Finished, step_type: str) -> str:
    calls = [c for s in run.of(step_type) for c in s.tool_calls if c.refused]
    assert len(calls) == 1 and not calls[0].ok
    return calls[0].output


def test_refused_calls_do_not_stop_the_run(refused_run: Finished):
    assert (refused_run.record.outcome, refused_run.record.exit_code) == ("done", 0)
    assert [c.refused for c in refused_run.calls()].count(True) == 3
    assert FIX_LINE in refused_run.on_branch("calc/ops.py")


def test_a_tool_the_step_may_not_use_is_refused_with_the_tools_it_may(refused_run: Finished):
    text = _refusal(refused_run, "navigate")
    assert text.startswith("edit is not available in this step.")
    assert "list_dir, find_files, search, done" in text
    assert refused_run.of("navigate")[-1].tool_calls[0].name == "done"  # it went on
    assert BUG_LINE in (refused_run.repo / "calc" / "ops.py").read_text()


def test_a_path_outside_the_repository_is_refused_and_not_read(refused_run: Finished):
    text = _refusal(refused_run, "read")
    assert text.startswith("Path '../outside.txt' is outside the repository")
    assert "secret" not in text
    assert refused_run.of("read")[-1].tool_calls[0].name == "done"


def test_an_edit_whose_old_text_matches_nowhere_is_refused_with_the_closest_text(
    refused_run: Finished,
):
    text = _refusal(refused_run, "edit")
    assert text.startswith("old was not found in 'calc/ops.py'")
    assert "near line 8" in text
    edits = [c for c in refused_run.calls("edit") if not c.refused]
    assert len(edits) == 1 and edits[0].ok  # the next attempt landed


# --- review ---


def test_when_the_second_opinion_disagrees_the_record_keeps_both_verdicts(
    tmp_path: Path, bug_repo: Path
):
    replies = [
        *explore(),
        *fix_the_bug(),
        verdict("approve", "divides by the count now", expect="scripted-large"),
        verdict("reject", "mean of [] should raise", expect="scripted-other"),
        done("Fix mean"),
    ]
    run = run_ssw(tmp_path, bug_repo, replies)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0)  # the reviewer decides
    [record] = run.of("review_verdicts")
    review = record.review
    assert review is not None
    assert (review.verdict, review.second_opinion, review.agree) == ("approve", "reject", False)
    assert (review.reasons, review.second_reasons) == (
        "divides by the count now",
        "mean of [] should raise",
    )
    assert any("reviewer says approve, second opinion says reject" in x for x in run.lines)
    assert len(run.of("gates")) == 1


def fixed_then_rejected(reasons: str) -> list[dict[str, Any]]:
    """The fix, then the reviewer rejects it for `reasons` and the second opinion approves."""
    return [*explore(), *fix_the_bug(), verdict("reject", reasons), verdict("approve")]


def test_a_rejected_change_goes_back_to_its_rung_then_to_the_next_which_the_review_approves(
    tmp_path: Path, bug_repo: Path
):
    """ADR 0054: a rejection sends the change back to the rung that made it, with the reasons;
    the second rejection on the rung hands the task to the next rung (`review_rejections`)."""
    docstring = tool("edit", path="calc/ops.py", old="0.0 for no values", new="0.0 for []")
    replies = [
        *fixed_then_rejected("say in the docstring that [] gives 0.0"),
        tool("edit", path="calc/ops.py", old="0.0 for []", new="0.0 for an empty list"),
        done("docstring says what [] gives", expect="scripted-mid"),
        verdict("reject", "still not happy"),
        verdict("approve"),
        docstring | {"expect_model": "scripted-large"},  # rung 1 takes the task over
        done("docstring reworded", expect="scripted-large"),
        verdict("approve"),
        verdict("approve"),
        done("Fix mean"),
    ]
    run = run_ssw(tmp_path, bug_repo, replies)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.lines
    assert [v.review.verdict for v in run.of("review_verdicts") if v.review] == [
        "reject",
        "reject",
        "approve",
    ]
    [escalation] = [e for e in run.events if isinstance(e, Escalation)]
    assert (escalation.rule, escalation.to_worker) == ("review_rejections", "large")
    assert escalation.reason == "the reviewer rejected the change 2 times on rung 0"
    assert [s.model for s in run.of("edit")] == ["scripted-mid"] * 4 + ["scripted-large"] * 2
    assert "0.0 for []" in run.on_branch("calc/ops.py")


def test_a_change_the_reviewer_rejects_on_every_rung_ends_rejected_never_done(
    tmp_path: Path, bug_repo: Path
):
    """Past the last rung a rejection ends the run `rejected` (exit 1): the change is kept on
    the branch, committed as unfinished, and `runs apply` wants --force for it."""
    policy = make_policy(escalation={"after_review_rejections": 1})
    replies = [
        *fixed_then_rejected("mean of [] should raise"),
        tool("edit", path="calc/ops.py", old="0.0 for no values", new="0.0 for []"),
        done("docstring", expect="scripted-large"),
        verdict("reject", "still no raise"),
        verdict("reject", "agreed: no raise"),
        done("Fix mean"),
    ]
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy)

    assert (run.record.outcome, run.record.exit_code) == ("rejected", 1), run.lines
    assert run.record.reason == (
        "the reviewer rejected the change 1 times on rung 1, and no rung is left to take over"
    )
    assert run.saved.outcome == "rejected"
    assert FIX_LINE in run.on_branch("calc/ops.py")  # the work is kept, not done
    message = git(bug_repo, "log", "-1", "--format=%B", f"ssw/{run.record.run_id}")
    assert message.startswith("ssw: unfinished (rejected)")
    refusals = apply_refusals(bug_repo, run.record.run_id)
    assert any(r.startswith("it ended rejected") for r in refusals), refusals


# --- model-output failures ---


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """One run in which the model answers badly in each of the early steps."""
    replies = [
        prose("I would look at calc/ops.py first."),  # plan: prose, nudged
        done("1. fix mean"),
        prose("calc/ops.py looks relevant."),  # navigate: prose twice, the step fails
        prose("Really, it is calc/ops.py."),
        {"reasoning": "Let me think about mean. " * 20, "content": "", "finish_reason": "length"},
        done("mean divides by n + 1"),  # read: the retry
        {"content": ""},  # run: an empty stop
        done("one test fails"),
        *fix_the_bug(),
        *approve_and_summarize(),
    ]
    # `small` (navigate, read, summarize) thinks at effort high and accepts "none".
    policy = make_policy(workers={"small": worker("scripted-thinker", effort="high")})
    with pytest.MonkeyPatch.context() as mp:
        work = tmp_path_factory.mktemp("faulty")
        use_extra_models(mp, work)
        try:
            return run_ssw(work, sample_repo(work / "repo", "mean_bug"), replies, policy=policy)
        finally:
            clear_cache()


def _failures(run: Finished, step_type: str) -> list[str | None]:
    return [s.model_output_failure for s in run.of(step_type)]


def test_bad_answers_in_early_steps_do_not_stop_the_run(faulty_run: Finished):
    assert (faulty_run.record.outcome, faulty_run.record.exit_code) == ("done", 0)
    assert FIX_LINE in faulty_run.on_branch("calc/ops.py")


def test_prose_instead_of_a_tool_call_gets_one_nudge_and_the_step_goes_on(faulty_run: Finished):
    assert _failures(faulty_run, "plan") == ["prose_instead_of_tool_call", None]
    assert faulty_run.of("plan")[1].tool_calls[0].name == "done"


def test_prose_twice_ends_the_step_and_the_run_goes_on_to_the_next(faulty_run: Finished):
    assert _failures(faulty_run, "navigate") == [
        "prose_instead_of_tool_call",
        "prose_instead_of_tool_call",
    ]
    types = [s.step_type for s in faulty_run.model_steps]
    assert types[types.index("navigate") : types.index("navigate") + 3] == [
        "navigate",
        "navigate",
        "read",
    ]


def test_thinking_cut_off_by_the_token_cap_is_retried_once_with_effort_none(
    faulty_run: Finished,
):
    cut, retry = faulty_run.of("read")
    assert (cut.model_output_failure, cut.finish_reason, cut.effort) == (
        "length_in_thinking",
        "length_in_thinking",
        "high",
    )
    assert (retry.model_output_failure, retry.effort) == (None, "none")
    assert retry.tool_calls[0].name == "done"


def test_an_empty_reply_with_a_normal_stop_is_handled_like_prose(faulty_run: Finished):
    assert _failures(faulty_run, "run") == ["empty_stop", None]
    assert faulty_run.of("run")[0].finish_reason == "empty_stop"
    assert faulty_run.of("run")[1].tool_calls[0].name == "done"


# --- a rung out of steps ---


def test_a_rung_out_of_steps_at_the_review_hands_over_instead_of_ending_the_run(
    tmp_path: Path, bug_repo: Path
):
    replies = whole_fix()
    policy = make_policy(limits={"steps_per_rung": 6})  # explore (4) + the fix (2)
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.record.reason


# --- gates the model cannot move ---


def test_the_gate_configuration_is_protected_from_the_models_writes(tmp_path: Path, bug_repo: Path):
    (bug_repo / ".stepswitch.toml").write_text('[gates.tests]\nkind = "tests"\n', encoding="utf-8")
    git(bug_repo, "add", "-A")
    git(bug_repo, "commit", "-q", "-m", "configure gates")
    replies = [
        *explore(),
        tool("write_file", path=".stepswitch.toml", content="[gates]\n"),  # weaken the gates
        *fix_the_bug(),
        *approve_and_summarize(),
    ]
    run = run_ssw(tmp_path, bug_repo, replies)
    refused = [c for c in run.calls("write_file") if c.refused]
    assert len(refused) == 1
    assert ".stepswitch.toml" in refused[0].output
    assert run.on_branch(".stepswitch.toml") == '[gates.tests]\nkind = "tests"\n'
    assert (run.record.outcome, run.record.exit_code) == ("done", 0)


def test_the_run_record_counts_every_model_output_failure(faulty_run: Finished):
    failed_steps = [s for s in faulty_run.steps if s.model_output_failure]
    assert len(failed_steps) >= 4  # prose (three times), cut-off thinking, an empty stop
    assert faulty_run.saved.totals.model_output_failures == len(failed_steps)
