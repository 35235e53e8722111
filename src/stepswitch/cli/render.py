"""All terminal text of a run: the sink that prints events as they come, and the bill. Every
line is printed with its control characters escaped: it holds text from the model, from the
commands and from the repository."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stepswitch.agent.events import Event, Notice, RunUpdate
from stepswitch.records.money import CostRange
from stepswitch.records.run import RunRecord
from stepswitch.records.steps import (
    Escalation,
    GateRecord,
    GateVerdicts,
    ModelStep,
    ReviewVerdicts,
)
from stepswitch.util.text import escape_controls

if TYPE_CHECKING:
    from stepswitch.agent.workspace.run_view import RunView

SCRIPTED_NOTE = "note: every reply came from a script; this says nothing about model quality"
SIMULATED_NOTE = (
    "note: every reply came from the simulated population (stepswitch.sim: a population file's "
    "stated rates, no model); this says nothing about model quality"
)


def no_model_mark(scripted: bool, simulated: bool) -> str:
    """How a step or run none of whose replies came from a model is marked."""
    return " [simulated]" if simulated else " [scripted]" if scripted else ""


def escaped(print_line: Callable[[str], None]) -> Callable[[str], None]:
    """`print_line` for text that may hold control characters: they are shown escaped."""
    return lambda line: print_line(escape_controls(line))


def money(cost: CostRange | None) -> str:
    return "unpriced" if cost is None else str(cost)


def format_step(r: ModelStep) -> str:
    model = r.model.rsplit("/", 1)[-1]
    tokens = f"in {r.prompt_tokens:,} ({r.cached_tokens:,} cached) out {r.completion_tokens:,}"
    if not r.usage_reported:
        tokens = "usage not reported"
    label = no_model_mark(r.scripted, r.simulated)
    if r.served_other_model:
        label += f" [served {r.served_model}]"
    if r.fallback_from:
        label += f" [fallback: {r.fallback_reason}]"  # the reason starts with the worker left
    return (
        f"{r.step:>3} {r.step_type:<9} {r.worker:<10} {model:<26} {tokens:<36} "
        f"{money(r.cost):>9}  {r.outcome}{label}"
    )


def _failure_reason(gate: GateRecord) -> str:
    """What failed, in a few words: the report's verdict without the gate's name, and the first
    failing test where the report names one."""
    lines = [line.strip() for line in gate.report.splitlines() if line.strip()]
    reason = lines[0].removeprefix(f"{gate.name}:").strip() if lines else ""
    first = next((line for line in lines[1:] if line.startswith(("FAILED ", "ERROR "))), None)
    if first is not None:
        reason += f"; {first if len(first) <= 120 else first[:117] + '...'}"
    return reason or "failed"


def format_gates(g: GateVerdicts) -> str:
    first = g.timings.get("first_verdict_s")
    when = f" (first test verdict {first:.1f} s)" if isinstance(first, float) else ""
    ran = ", ".join(r.name for r in g.gates) or "none"
    failed = [r for r in g.gates if not r.passed]
    failing = next((r for r in failed if r.name == g.failed_gate), failed[0] if failed else None)
    if g.passed or failing is None:
        return f"    gates     {g.note}: {ran}{when}"
    # The failing gate named once, with why; then the ones that passed, and when.
    passed = ", ".join(r.name for r in g.gates if r.passed)
    notes = [f"passed: {passed}"] if passed else []
    if isinstance(first, float):
        notes.append(f"first test verdict {first:.1f} s")
    also = f" ({'; '.join(notes)})" if notes else ""
    return f"    gates     failed: {failing.name}: {_failure_reason(failing)}{also}"


def no_model_label(scripted: bool, simulated: bool) -> str:
    """How the start of a run none of whose replies come from a model says so."""
    if simulated:
        return " — the models are SIMULATED (stepswitch.sim, no real model)"
    return " — the model is SCRIPTED (replayed replies, no real model)" if scripted else ""


def format_run_start(run: RunRecord) -> str:
    label = no_model_label(run.scripted, run.simulated)
    return f"ssw run {run.run_id}: branch {run.branch}{label}"


def format_bill(run: RunRecord) -> list[str]:
    t = run.totals
    lines = [
        f"{run.outcome}: {run.reason}",
        f"bill: {t.cost} over {t.steps} steps; "
        f"tokens in {t.prompt_tokens:,} ({t.cached_tokens:,} cached), "
        f"out {t.completion_tokens:,}"
        + (f"; {t.unpriced_steps} unpriced steps" if t.unpriced_steps else ""),
    ]
    lines += [f"  {name:<12} {cost}" for name, cost in sorted(t.by_worker.items())]
    lines.append(f"change: branch {run.branch} at {run.commit[:12] if run.commit else '-'}")
    if run.scripted:
        lines.append(SIMULATED_NOTE if run.simulated else SCRIPTED_NOTE)
    return lines


class TerminalPrinter:
    """The sink that prints a run as it goes: one line a step, the gates, escalations, the bill."""

    def __init__(self, print_line: Callable[[str], None]) -> None:
        self.print_line = print_line

    def on_event(self, event: Event) -> None:
        for line in self.lines(event):
            self.print_line(line)

    def lines(self, event: Event) -> list[str]:
        if isinstance(event, ModelStep):  # one line, so the model's text cannot forge a line
            return [escape_controls(format_step(event), keep_newlines=False)]
        return [escape_controls(line) for line in self._lines(event)]

    def _lines(self, event: Event) -> list[str]:
        if isinstance(event, Notice):
            return [event.text]
        if isinstance(event, RunUpdate):
            return format_bill(event.run) if event.final else [format_run_start(event.run)]
        if isinstance(event, ModelStep):
            return [format_step(event)]
        if isinstance(event, GateVerdicts):
            return [format_gates(event)]
        if isinstance(event, Escalation):
            return [
                f"  ^ escalation {event.to_level}: {event.reason}; "
                f"{event.to_worker} takes the task over"
            ]
        if isinstance(event, ReviewVerdicts) and event.review.agree is False:
            r = event.review
            return [
                f"    review    reviewer says {r.verdict}, second opinion says {r.second_opinion}"
            ]
        return []


def _workers(policy: dict[str, Any]) -> str:
    workers = policy.get("workers")
    if not isinstance(workers, dict):
        return ""
    named = [
        f"{name} {w.get('provider')}/{w.get('model')}"
        for name, w in workers.items()
        if isinstance(w, dict)
    ]
    return f" (workers: {', '.join(named)})" if named else ""


def _unused(line: str) -> None:
    raise AssertionError("only TerminalPrinter.lines is called")


def format_run_view(view: RunView) -> list[str]:
    """`ssw runs show`: the run's header, its steps as the run printed them, the bill, the
    verdicts and the change. Every line escaped: most of it is the model's or the task's text."""
    run, entry = view.loaded.run, view.entry
    mark = no_model_mark(run.scripted, run.simulated)
    head = [
        f"run {run.run_id}: {entry.outcome}" + (f" ({run.reason})" if run.reason else "") + mark,
        f"task: {run.task}",
        f"policy: {run.policy_path}" + _workers(run.policy),
        f"branch: {entry.branch or f'{run.branch} (gone)'}, commit "
        f"{run.commit[:12] if run.commit else '-'}, base {run.base_commit[:12] or '-'}",
        *([f"tier memory: {run.tier_memory.why}"] if run.tier_memory is not None else []),
        "steps:",
    ]
    steps = [line for event in view.loaded.steps for line in TerminalPrinter(_unused).lines(event)]
    if view.loaded.unknown_events:
        n = view.loaded.unknown_events
        steps.append(
            f"  ({n} event{'s' if n > 1 else ''} of a kind this ssw does not know "
            "(a newer ssw's) skipped)"
        )
    t = run.totals
    dollars = "-" if entry.dollars is None else entry.dollars.text()
    bill = [
        f"bill: {dollars} over {t.steps} steps; tokens in {t.prompt_tokens:,} "
        f"({t.cached_tokens:,} cached), out {t.completion_tokens:,}",
        *(f"  {name:<12} {cost}" for name, cost in sorted(t.by_worker.items())),
    ]
    last = view.gates[-1] if view.gates else None
    gates = f"gates: {run.gates_verdict}"
    if last is not None:
        named = ", ".join(f"{g.name} {'passed' if g.passed else 'FAILED'}" for g in last.gates)
        gates += f" ({named or 'no gate'}; {len(view.gates)} round(s))"
    review = view.review
    verdicts = [gates]
    if run.review_verdict is not None or review is not None:
        second = review.review.second_opinion if review is not None else None
        verdicts.append(
            f"review: {run.review_verdict or '-'}"
            + (f", second opinion {second}" if second is not None else "")
        )
    if view.apply_refused is not None:
        refused = "; ".join(view.apply_refused)
        verdicts.append(f"apply: would refuse: {refused}" if refused else "apply: ok")
    change = ["change:", *view.diff_stat.splitlines()] if view.diff_stat else []
    if view.no_diff is not None:
        change = [f"change: none to show ({view.no_diff})"]
    lines = [escape_controls(x) for x in [*head]]
    lines += steps  # TerminalPrinter escaped them
    lines += [escape_controls(x) for x in [*bill, *verdicts, *change]]
    if run.traceback is not None:  # a harness error: where ssw itself broke
        lines.append("traceback:")
        lines += [escape_controls(f"  {line}") for line in run.traceback.splitlines()]
    if run.scripted:
        lines.append(SIMULATED_NOTE if run.simulated else SCRIPTED_NOTE)
    if view.diff is not None:
        lines += ["", escape_controls(view.diff)]
    return lines
