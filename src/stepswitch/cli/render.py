"""All terminal text of a run: the sink that prints events as they come, and the bill. Every
line is printed with its control characters escaped: it holds text from the model, from the
commands and from the repository."""

from __future__ import annotations

from collections.abc import Callable

from stepswitch.agent.events import Event, Notice, RunUpdate
from stepswitch.records.money import CostRange
from stepswitch.records.run import RunRecord
from stepswitch.records.steps import (
    Escalation,
    GateVerdicts,
    ModelStep,
    ReviewVerdicts,
    ToolCallRecord,
)
from stepswitch.util.text import escape_controls

SCRIPTED_NOTE = "note: every reply came from a script; this says nothing about model quality"


def escaped(print_line: Callable[[str], None]) -> Callable[[str], None]:
    """`print_line` for text that may hold control characters: they are shown escaped."""
    return lambda line: print_line(escape_controls(line))


def money(cost: CostRange | None) -> str:
    return "unpriced" if cost is None else str(cost)


def _tool_outcome(t: ToolCallRecord) -> str:
    if t.exit_code is not None:
        return f"{t.name} exit {t.exit_code}"
    return t.name + ("" if t.ok else " refused" if t.refused else " failed")


def format_step(r: ModelStep) -> str:
    model = r.model.rsplit("/", 1)[-1]
    tokens = f"in {r.prompt_tokens:,} ({r.cached_tokens:,} cached) out {r.completion_tokens:,}"
    if not r.usage_reported:
        tokens = "usage not reported"
    tools = ", ".join(map(_tool_outcome, r.tool_calls))
    outcome = r.error or r.model_output_failure or tools or r.note
    if r.review is not None:
        outcome = f"verdict {r.review.verdict}"
    label = " [scripted]" if r.scripted else ""
    if r.served_other_model:
        label += f" [served {r.served_model}]"
    return (
        f"{r.step:>3} {r.step_type:<9} {r.worker:<10} {model:<26} {tokens:<36} "
        f"{money(r.cost):>9}  {outcome}{label}"
    )


def format_gates(g: GateVerdicts) -> str:
    note = g.note
    first = g.timings.get("first_verdict_s")
    when = f" (first test verdict {first:.1f} s)" if isinstance(first, float) else ""
    return f"    gates     {note}: {', '.join(r.name for r in g.gates) or 'none'}{when}"


def format_run_start(run: RunRecord) -> str:
    label = " — the model is SCRIPTED (replayed replies, no real model)" if run.scripted else ""
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
        lines.append(SCRIPTED_NOTE)
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
