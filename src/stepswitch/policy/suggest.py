"""`ssw policy suggest` and `ssw policy check --runs` (ADR 0040): from what the step records
measured (policy/measured.py), the cheapest worker of a policy per step type that clears a floor,
what switching costs in prompt cache, and the commands that would test the suggestion. It never
says a suggestion saves anything: only an interleaved bench, registered as a claim, can."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.policy.measured import Key, Measured
from stepswitch.policy.model import Policy, WorkerConfig, route
from stepswitch.registry.presets import Price, ProviderSpec, get_model
from stepswitch.steps import StepType


def _price(registry: Mapping[str, ProviderSpec], worker: WorkerConfig) -> Price | None:
    spec = registry.get(worker.provider)
    if spec is None or not (worker.model in spec.models or spec.any_model):
        return None
    price = get_model(spec, worker.model).price
    return price if isinstance(price, Price) else None


def _of(measured: Mapping[Key, Measured], step_type: str, w: WorkerConfig) -> Measured | None:
    return measured.get((step_type, w.provider, w.model))


@dataclass(frozen=True)
class SwitchCost:
    step_type: str
    current: str  # the worker that takes the step type now (level 0)
    cached_share: float  # of its prompts, in the records
    cached_per_step: float  # tokens
    added_usd: dict[str, float]  # another worker -> dollars its next call would add


def switch_costs(
    policy: Policy, measured: Mapping[Key, Measured], registry: Mapping[str, ProviderSpec]
) -> list[SwitchCost]:
    """Per step type: the cached share its worker had, and what a switch to each other worker
    would add to the next call: the prefix that was cached, sent uncached at the other's input
    price, less what it cost cached at the current worker's."""
    out = []
    for step_type in StepType:
        name = route(policy, step_type, 0)
        if name is None:
            continue
        current = policy.workers[name]
        m = _of(measured, step_type.value, current)
        price = _price(registry, current)
        if m is None or price is None:
            continue
        cached_price = price.cached_input if price.cached_input is not None else price.input
        added = {}
        for other_name, other in policy.workers.items():
            other_price = _price(registry, other)
            if other_name == name or other_price is None:
                continue
            tokens = m.cached_per_step
            added[other_name] = tokens * (other_price.input - cached_price) / 1e6
        out.append(SwitchCost(step_type.value, name, m.cached_share, m.cached_per_step, added))
    return out


def render_switch_costs(costs: list[SwitchCost]) -> list[str]:
    if not costs:
        return ["\nswitch costs: no step of this policy's workers in the records"]
    lines = [
        "\nswitch costs (from the records: the cached prefix, resent uncached to another worker):"
    ]
    for c in costs:
        adds = ", ".join(
            f"{w} {'+' if usd >= 0 else '-'}${abs(usd):.4f}"
            for w, usd in sorted(c.added_usd.items())
        )
        lines.append(
            f"  {c.step_type:<9} {c.current}: {c.cached_share:.0%} of its prompt cached "
            f"({c.cached_per_step:,.0f} tokens a step); the next call on {adds or 'no other'}"
        )
    return lines


@dataclass(frozen=True)
class Choice:
    step_type: str
    current: str
    chosen: str | None  # None: no worker cleared the floor with enough steps
    why: str
    saving_per_run: float | None  # dollars, from the records' means and the switch cost


def suggest(
    policy: Policy,
    measured: Mapping[Key, Measured],
    registry: Mapping[str, ProviderSpec],
    *,
    runs: int,
    floor: float,
    min_steps: int,
) -> list[Choice]:
    """Per step type at level 0: the cheapest worker whose clean share's lower bound clears
    `floor` over at least `min_steps` steps; its expected saving per run (steps of the type per
    run times the difference in dollars per step, less one switch cost)."""
    costs = {c.step_type: c for c in switch_costs(policy, measured, registry)}
    choices = []
    for step_type in StepType:
        name = route(policy, step_type, 0)
        if name is None:
            continue
        ok: list[tuple[float, str, Measured]] = []
        for other, worker in policy.workers.items():
            m = _of(measured, step_type.value, worker)
            usd = m.usd_per_step if m is not None else None
            enough = m is not None and usd is not None and m.steps >= min_steps
            if enough and m is not None and usd is not None and m.clean_interval[0] >= floor:
                ok.append((usd, other, m))
        current = _of(measured, step_type.value, policy.workers[name])
        if not ok:
            why = f"no worker cleared {floor:.0%} over {min_steps}+ steps"
            choices.append(Choice(step_type.value, name, None, why, None))
            continue
        usd, chosen, m = min(ok, key=lambda item: (item[0], item[1]))
        lo, hi = m.clean_interval
        clean = f"clean {m.clean}/{m.steps} [{lo:.0%}, {hi:.0%}]"
        why = f"{_n(m.steps, 'step')}, {clean}, ${usd:.4f} a step"
        saving = None
        current_usd = current.usd_per_step if current is not None else None
        if current is not None and current_usd is not None and runs:
            per_run = current.steps / runs
            switch = costs[step_type.value].added_usd.get(chosen, 0.0) if chosen != name else 0.0
            saving = per_run * (current_usd - usd) - switch
        choices.append(Choice(step_type.value, name, chosen, why, saving))
    return choices


def suggested_policy(raw: dict[str, Any], choices: list[Choice]) -> dict[str, Any]:
    """The policy file's table with a level-0 rule first for each step type that changes."""
    moved = [c for c in choices if c.chosen is not None and c.chosen != c.current]
    rules = [
        {"when": {"step_type": [c.step_type], "escalations": [0]}, "worker": c.chosen}
        for c in moved
    ]
    return {**raw, "rules": [*rules, *raw.get("rules", [])]}


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def render_measured(measured: Mapping[Key, Measured]) -> list[str]:
    lines = [
        "measured (step type, model: steps, $ a step, clean share [95% interval], gates passed "
        "after, refused, cut at the cap, escalations)"
    ]
    for key in sorted(measured):
        m = measured[key]
        lo, hi = m.clean_interval
        usd = f"${m.usd_per_step:.4f}" if m.usd_per_step is not None else "unpriced"
        lines.append(
            f"  {m.step_type:<9} {m.provider}/{m.model}: {_n(m.steps, 'step')}, {usd}, clean "
            f"{m.clean}/{m.steps} [{lo:.0%}, {hi:.0%}], gates {m.gates_passed}/{m.gated}, "
            f"refused {m.refused}, cut {m.cut}, escalations {m.escalations}"
        )
    return lines


def render_suggestion(
    choices: list[Choice], runs: int, policy_path: Path, out: Path | None
) -> list[str]:
    lines = [f"\nsuggestion (from {_n(runs, 'run')}):"]
    for c in choices:
        if c.chosen is None or c.chosen == c.current:
            lines.append(f"  {c.step_type:<9} keep {c.current}: {c.why}")
        else:
            saving = (
                f"; expected ${c.saving_per_run:.4f} a run less (the records' means, one switch)"
                if c.saving_per_run is not None
                else ""
            )
            lines.append(f"  {c.step_type:<9} {c.current} -> {c.chosen}: {c.why}{saving}")
    total = sum(c.saving_per_run or 0.0 for c in choices if c.chosen not in (None, c.current))
    lines.append(
        f"expected: ${total:.4f} a run less, if the next runs are like these ({_n(runs, 'run')}); "
        "from this many records that is a guess, not a measurement. Nothing is claimed."
    )
    if out is not None:
        contestants = (
            f"--contestant {shlex.quote(str(policy_path))} --contestant {shlex.quote(str(out))}"
        )
        lines += [
            f"written: {out}",
            "to test it, side by side on the same tasks (first add the claim to "
            "claims/claims.yaml):",
            "  ssw claims register C-NEW",
            f"  ssw bench run --suite bench/suites/general {contestants} --runs-per-task 3 "
            "--claim C-NEW",
        ]
    return lines
