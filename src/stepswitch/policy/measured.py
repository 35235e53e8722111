"""What the step records say of each model at each step type (ADR 0040): `ssw policy suggest`
and the switch costs of `ssw policy check --runs`.

For each (step type, provider, model), over the model steps of the runs read:
- dollars per step (each step's high bound: a range's top, the dollars it may have cost);
- a step is *clean* when none of its tool calls was refused, its output was not cut at the cap
  (finish `length`), it had no output failure and no error, and the gates' verdict that followed
  it in its run (the next one) passed, where one followed; the clean share gets a 95% Wilson
  interval;
- escalations it took part in: an escalation counts once for each (type, model) that had a step
  on the rung it left;
- its prompt's cached share (cached tokens over prompt tokens).
Nothing here is a judgement of a model: it is what these records hold, with their counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.records.folder import LoadedRun, load_run
from stepswitch.records.steps import Escalation, GateVerdicts, ModelStep

Key = tuple[str, str, str]  # (step type, provider, model)


@dataclass
class Measured:
    step_type: str
    provider: str
    model: str
    steps: int = 0
    dollars: float = 0.0  # the steps' high bounds, summed
    unpriced: int = 0  # steps without a price: left out of dollars
    refused: int = 0
    cut: int = 0
    errors: int = 0
    gated: int = 0  # steps a gates verdict followed
    gates_passed: int = 0
    escalations: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    clean: int = 0
    runs: set[str] = field(default_factory=set)

    @property
    def usd_per_step(self) -> float | None:
        priced = self.steps - self.unpriced
        return self.dollars / priced if priced else None

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def cached_per_step(self) -> float:
        return self.cached_tokens / self.steps if self.steps else 0.0

    @property
    def clean_interval(self) -> tuple[float, float]:
        return wilson(self.clean, self.steps)


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a share; (0, 1) when nothing was counted."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def run_folders(paths: Iterable[Path]) -> list[Path]:
    """Every run folder (one holding run.json and steps.jsonl) at or under each path."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise UsageError(f"{path}: no such folder of runs")
        here = [
            p.parent for p in sorted(path.rglob("steps.jsonl")) if (p.parent / "run.json").is_file()
        ]
        if not here:
            raise UsageError(f"{path}: no run records (a folder with run.json and steps.jsonl)")
        found += here
    return sorted(set(found))


def _dirty(step: ModelStep) -> bool:
    refused = any(call.refused for call in step.tool_calls)
    return (
        refused or step.finish_reason == "length" or bool(step.model_output_failure or step.error)
    )


def measure(runs: Iterable[LoadedRun]) -> dict[Key, Measured]:
    found: dict[Key, Measured] = {}
    for loaded in runs:
        waiting: list[tuple[Measured, bool]] = []  # steps since the last gates verdict
        on_rung: set[Key] = set()
        for event in loaded.steps:
            if isinstance(event, ModelStep):
                key = (event.step_type, event.provider, event.model)
                m = found.setdefault(key, Measured(*key))
                m.steps += 1
                m.runs.add(loaded.run.ids.run_id)
                if event.cost is None:
                    m.unpriced += 1
                else:
                    m.dollars += event.cost.high
                dirty = _dirty(event)
                m.refused += any(call.refused for call in event.tool_calls)
                m.cut += event.finish_reason == "length"
                m.errors += event.error is not None
                m.prompt_tokens += event.prompt_tokens
                m.cached_tokens += event.cached_tokens
                waiting.append((m, dirty))
                on_rung.add(key)
            elif isinstance(event, GateVerdicts):
                for m, dirty in waiting:
                    m.gated += 1
                    m.gates_passed += event.passed
                    m.clean += not dirty and event.passed
                waiting = []
            elif isinstance(event, Escalation):
                for key in on_rung:
                    found[key].escalations += 1
                on_rung = set()
        for m, dirty in waiting:  # no verdict followed: clean by the step alone
            m.clean += not dirty
    return found


# The bench tags the runs of its built-in contestants so (bench/taskrun.py): they call no model.
BUILT_IN_KINDS = ("oracle", "null")


def load_runs(paths: Iterable[Path]) -> tuple[list[LoadedRun], int]:
    """The runs at or under `paths`, and how many built-in contestants' runs were left out."""
    loaded = [load_run(folder) for folder in run_folders(paths)]
    kept = [r for r in loaded if r.run.tags.get("kind") not in BUILT_IN_KINDS]
    return kept, len(loaded) - len(kept)
