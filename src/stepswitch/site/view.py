"""What the page shows, as plain data: comparisons (boards) of contestants task by task, each
contestant's totals, a run's labels and grade, and the JSON of one run that the page's script
renders when its task is opened. The JSON is the records as loaded, plus display strings made
here, so the page and the terminal print money one way (records.money)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stepswitch.bench.files import CSV_COLUMNS, ResultRow, SummaryFile
from stepswitch.demo.as_if import AsIfBill, as_if_models, stands_for_the_ladder
from stepswitch.errors import ConfigError
from stepswitch.records.folder import LoadedRun
from stepswitch.records.money import CostRange, format_usd
from stepswitch.records.steps import GateVerdicts, ModelStep, ReviewVerdicts
from stepswitch.registry.presets import load_registry
from stepswitch.site.sources import Kind, ReplayRun, Source

LABELLED_KINDS = ("oracle", "null")  # bench contestants that are not an agent
BUILT_IN = "built-in"  # the label of those
BUILTIN_POLICY = "builtin:"  # how their records name their policy (bench/contestants.py)
_DROPPED = ("schema_version", "run_id")  # the same on every event of a run


@dataclass(frozen=True)
class Board:
    """One side-by-side comparison: a bench run, or the lone runs named together."""

    title: str
    kind: Kind
    sources: tuple[Source, ...]
    contestants: tuple[str, ...]
    tasks: tuple[str, ...]
    runs: tuple[ReplayRun, ...]
    summary: SummaryFile | None = None
    notes: tuple[str, ...] = ()
    cells: dict[tuple[str, str], list[ReplayRun]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for run in sorted(self.runs, key=lambda r: r.attempt):
            self.cells.setdefault((run.task, run.contestant), []).append(run)

    def cell(self, task: str, contestant: str) -> list[ReplayRun]:
        """The task's runs by this contestant, by attempt."""
        return self.cells.get((task, contestant), [])


@dataclass
class ContestantTotals:
    contestant: str
    runs: int = 0
    problems: int = 0  # task runs that do not load or whose folder is missing
    running: int = 0
    done: int = 0
    graded: int = 0
    graded_passed: int = 0
    cost: CostRange = field(default_factory=CostRange)
    unpriced_steps: int = 0
    steps: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    escalations: int = 0
    gate_failures: int = 0
    refusals: int = 0  # tool calls the tools refused
    rejections: int = 0  # review verdicts other than approve
    labels: set[str] = field(default_factory=set)


def labels(run: ReplayRun) -> list[str]:
    """What a run is besides an agent's work: scripted or simulated replies, or a built-in bench
    contestant (oracle: the reference change, null: no change). A built-in's steps go through
    the scripted preset at $0, but it replays no script: it is badged built-in, not scripted."""
    record = run.record
    kinds = {run.contestant.lower()}
    if run.result is not None:
        kinds.add(run.result.contestant_kind)
    if record is not None:
        kinds.add(record.tags.get("kind", "").lower())
        if record.policy_path.startswith(BUILTIN_POLICY):  # "builtin:oracle"
            kinds.add(record.policy_path.removeprefix(BUILTIN_POLICY))
    builtins = [k for k in LABELLED_KINDS if k in kinds]
    if builtins:
        return [BUILT_IN, *builtins]
    loaded = run.loaded
    if loaded is not None and (loaded.run.scripted or any(s.scripted for s in loaded.model_steps)):
        # A simulated run is scripted too (no model answered): both badges, the banner as ever.
        return ["simulated", "scripted"] if loaded.run.simulated else ["scripted"]
    return []


def grade(run: ReplayRun) -> tuple[str, bool | None] | None:
    """The hidden tests' verdict from results.csv: its text and whether it passed."""
    row = run.result
    if row is None:
        return None
    text = "passed" if row.passed else "failed"
    if row.verdict:  # the test runner's own summary, e.g. "3 failed"
        text += f" ({row.verdict})"
    return text, row.passed


def result_json(row: ResultRow) -> dict[str, Any]:
    """The run's row as results.csv has it."""
    return row.model_dump(mode="json", include=set(CSV_COLUMNS))


def cached_share(prompt: int, cached: int) -> str:
    return f"{cached / prompt:.0%}" if prompt else "0%"


def tokens_text(prompt: int, cached: int, completion: int) -> str:
    return f"in {prompt:,} ({cached_share(prompt, cached)} cached) out {completion:,}"


def money(cost: CostRange | None) -> str:
    return "unpriced" if cost is None else str(cost)


def policy_text(policy_path: str) -> str:
    """The policy as the record names it; an absolute path (a policy outside the repository) by
    its file name only, said so: the page carries no path of the machine that ran it."""
    posix = policy_path.replace("\\", "/")
    path = Path(posix)
    if path.is_absolute() or posix[1:3] == ":/":
        return f"{path.name} (outside the repository; its folder is not shown)"
    return policy_path


def _board(title: str, kind: Kind, sources: list[Source], runs: list[ReplayRun]) -> Board:
    contestants = tuple(dict.fromkeys(r.contestant for r in runs))
    tasks = tuple(dict.fromkeys(r.task for r in runs))
    summary = sources[0].summary if len(sources) == 1 else None
    notes = tuple(n for s in sources for n in s.notes)
    return Board(title, kind, tuple(sources), contestants, tasks, tuple(runs), summary, notes)


def _lone_runs(sources: list[Source]) -> list[ReplayRun]:
    """Lone runs of the same task side by side, one contestant per policy, attempts by start."""
    pairs = sorted(
        ((s, r) for s in sources for r in s.runs),
        key=lambda p: (p[1].record.started_at if p[1].record else "", p[0].name),
    )
    seen: dict[tuple[str, str], int] = defaultdict(int)
    numbered = []
    for source, run in pairs:
        attempt = seen[(run.task, run.contestant)]
        seen[(run.task, run.contestant)] += 1
        numbered.append(replace(run, key=source.name, attempt=attempt))
    return numbered


def boards(sources: list[Source]) -> list[Board]:
    found = []
    for source in sources:
        if source.kind == "bench":
            runs = sorted(source.runs, key=lambda r: (r.task, r.contestant, r.attempt))
            found.append(_board(f"bench run {source.name}", "bench", [source], runs))
    lone = [s for s in sources if s.kind == "run"]
    if lone:
        title = f"run {lone[0].name}" if len(lone) == 1 else f"{len(lone)} runs"
        found.append(_board(title, "run", lone, _lone_runs(lone)))
    return found


def totals(board: Board) -> list[ContestantTotals]:
    rows = {c: ContestantTotals(c) for c in board.contestants}
    for run in board.runs:
        t = rows[run.contestant]
        t.runs += 1
        t.labels.update(labels(run))
        g = grade(run)
        if g is not None:
            t.graded += 1
            t.graded_passed += g[1] is True
        if run.loaded is None:
            t.problems += 1
            continue
        rec, steps = run.loaded.run, run.loaded.steps
        t.running += rec.outcome == "running"
        t.done += rec.outcome == "done"
        t.cost = t.cost + rec.totals.cost
        t.unpriced_steps += rec.totals.unpriced_steps
        t.steps += rec.totals.steps
        t.prompt_tokens += rec.totals.prompt_tokens
        t.cached_tokens += rec.totals.cached_tokens
        t.completion_tokens += rec.totals.completion_tokens
        t.escalations += rec.totals.escalations
        t.gate_failures += rec.totals.gate_failures
        t.refusals += sum(
            c.refused for s in steps if isinstance(s, ModelStep) for c in s.tool_calls
        )
        t.rejections += sum(
            s.review.verdict != "approve" for s in steps if isinstance(s, ReviewVerdicts)
        )
    return list(rows.values())


def as_if(loaded: LoadedRun) -> tuple[list[str], dict[int, str]]:
    """For a scripted run whose workers are the demo's (each on the scripted provider, named for
    a model of the ladder): its bill as if the ladder had served it, the demo's lines, and each
    step's as-if price by its seq, both from the steps' token counts at list prices when the
    page is built (demo/as_if.py). Nothing for any other run."""
    rec = loaded.run
    workers = rec.policy.get("workers", {}) if isinstance(rec.policy, dict) else {}
    if not rec.scripted or not stands_for_the_ladder(workers):
        return [], {}
    try:
        models = as_if_models(load_registry())
    except ConfigError:  # a ladder price without a source: no figure the page cannot back
        return [], {}
    bill = AsIfBill(models, lambda line: None)
    steps = {}
    for step in loaded.model_steps:
        priced = bill.add(step)
        if priced is not None:
            steps[step.seq] = f"{priced[0].model}: {format_usd(priced[1])} at list price"
    return bill.summary(), steps


def _event_json(event: Any, as_if_steps: dict[int, str]) -> dict[str, Any]:
    data: dict[str, Any] = event.model_dump(mode="json", exclude=set(_DROPPED))
    if isinstance(event, ModelStep):
        data["cost_text"] = money(event.cost)
        data["tokens_text"] = (
            tokens_text(event.prompt_tokens, event.cached_tokens, event.completion_tokens)
            if event.usage_reported
            else "usage not reported"
        )
        if event.seq in as_if_steps:
            data["as_if_text"] = as_if_steps[event.seq]
    elif isinstance(event, GateVerdicts):
        data["note"] = event.note
    return data


def _worker_text(worker: dict[str, Any]) -> str:
    text = f"{worker.get('provider', '?')}/{worker.get('model', '?')}"
    return text + (f" effort {worker['effort']}" if worker.get("effort") else "")


def _price_text(price: dict[str, Any] | None) -> str:
    if not price:
        return "unpriced"
    cached = price.get("cached_input")
    parts = [f"in ${price.get('input', 0):g}"]
    if cached is not None:
        parts.append(f"cached ${cached:g}")
    parts.append(f"out ${price.get('output', 0):g} per million tokens")
    return ", ".join(parts) + f" ({price.get('source', '?')}, {price.get('as_of', '?')})"


def run_json(run: ReplayRun) -> dict[str, Any]:
    """One task run as the page's script renders it; only what the records hold."""
    head: dict[str, Any] = {
        "key": run.key,
        "task": run.task,
        "contestant": run.contestant,
        "attempt": run.attempt,
        "labels": labels(run),
        "result": None if run.result is None else result_json(run.result),
        "grade": (grade(run) or ("", None))[0],
    }
    if run.loaded is None:
        return {**head, "problem": run.problem}
    rec = run.loaded.run
    t = rec.totals
    workers = rec.policy.get("workers", {}) if isinstance(rec.policy, dict) else {}
    as_if_lines, as_if_steps = as_if(run.loaded)
    return {
        **head,
        "run_id": rec.run_id,
        "task_text": rec.task,
        "outcome": rec.outcome,
        "reason": rec.reason,
        "gates_verdict": rec.gates_verdict,
        "review_verdict": rec.review_verdict,
        "started_at": rec.started_at,
        "elapsed_s": rec.elapsed_s,
        "branch": rec.branch,
        "commit": rec.commit,
        "base_commit": rec.base_commit,
        "ssw_version": rec.ssw_version,
        "policy": policy_text(rec.policy_path),
        "workers": {name: _worker_text(w) for name, w in workers.items() if isinstance(w, dict)},
        "prices": {name: _price_text(p) for name, p in rec.prices.items()},
        "bill": money(t.cost)
        + (f" + {t.unpriced_steps} unpriced steps" if t.unpriced_steps else ""),
        "tokens": tokens_text(t.prompt_tokens, t.cached_tokens, t.completion_tokens),
        "steps": t.steps,
        "by_worker": {name: money(cost) for name, cost in sorted(t.by_worker.items())},
        "as_if": as_if_lines,
        "changed_files": [f.model_dump(mode="json") for f in rec.changed_files],
        "events": [_event_json(e, as_if_steps) for e in run.loaded.steps],
    }
