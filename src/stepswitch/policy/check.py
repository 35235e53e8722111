"""`ssw policy check`: who takes each step at each level, at what price, and what looks wrong.

Reads the policy and the registry only; no model is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stepswitch.policy.model import Policy, WorkerConfig, fallback_chain, route
from stepswitch.registry.presets import ModelSpec, Price, ProviderSpec, get_model, resolve_effort
from stepswitch.steps import StepType

UNKNOWN = "unknown"


@dataclass(frozen=True)
class WorkerInfo:
    """One configured worker as the registry sees it."""

    name: str
    provider: str
    model: str
    effort: str  # the effort that will be sent: "-" for none, "?" when the model is unknown
    input_price: str  # US dollars per million tokens, or "unknown"
    output_price: str
    family: str | None  # None: the registry does not know the model


@dataclass(frozen=True)
class RouteRow:
    step_type: StepType
    level: int
    worker: WorkerInfo | None  # None: nothing answers (only for a policy not from load_policy)


@dataclass(frozen=True)
class PolicyCheck:
    rows: tuple[RouteRow, ...]
    reviewer: WorkerInfo | None
    second_opinion: WorkerInfo | None
    warnings: tuple[str, ...]
    fallbacks: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (worker, its fallbacks in order)
    memory: bool = False  # [escalation] memory: runs start on the rung recent runs needed


def _money(value: float) -> str:
    return f"{value:g}"


def _lookup(registry: Mapping[str, ProviderSpec], w: WorkerConfig) -> ModelSpec | None:
    spec = registry.get(w.provider)
    if spec is None or not (w.model in spec.models or spec.any_model):
        return None
    return get_model(spec, w.model)


def _info(name: str, w: WorkerConfig, model: ModelSpec | None) -> WorkerInfo:
    if model is None:
        return WorkerInfo(name, w.provider, w.model, "?", UNKNOWN, UNKNOWN, None)
    effort = resolve_effort(model, w.effort) or "-"
    price = model.price
    if isinstance(price, Price):
        cost_in, cost_out = _money(price.input), _money(price.output)
    else:
        cost_in = cost_out = UNKNOWN
    return WorkerInfo(name, w.provider, w.model, effort, cost_in, cost_out, model.family)


def _worker_warnings(
    name: str,
    w: WorkerConfig,
    model: ModelSpec | None,
    registry: Mapping[str, ProviderSpec],
    allow_unpriced: bool,
) -> list[str]:
    key = f"workers.{name}"
    spec = registry.get(w.provider)
    if spec is None:
        known = ", ".join(sorted(registry))
        return [f"{key}.provider: {w.provider!r} is not in the registry (known: {known})"]
    if model is None:
        known = ", ".join(sorted(spec.models))
        return [f"{key}.model: {w.model!r} is not a {w.provider} model (known: {known})"]
    out: list[str] = []
    if w.effort is not None:
        sent = resolve_effort(model, w.effort)
        if sent is None:
            out.append(
                f"{key}.effort: {w.model} accepts no effort, so {w.effort!r} resolves "
                "to none (no effort field is sent)"
            )
        elif sent != w.effort:
            accepted = ", ".join(model.reasoning_efforts)
            out.append(
                f"{key}.effort: {w.model} does not accept {w.effort!r} (accepts {accepted}); "
                f"it resolves to {sent!r}"
            )
    if model.max_output_tokens is not None and w.max_output_tokens > model.max_output_tokens:
        out.append(
            f"{key}.max_output_tokens: {w.max_output_tokens} is above the model's "
            f"{model.max_output_tokens}"
        )
    if w.wire_format is not None and w.wire_format not in spec.wire_formats:
        out.append(
            f"{key}.wire_format: {w.provider} speaks {', '.join(spec.wire_formats)}, "
            f"not {w.wire_format!r}"
        )
    if not model.priced and not allow_unpriced:
        if spec.prices_endpoint:
            how = (
                f"`ssw run` reads it from the provider's model list when {spec.api_key_env} is "
                f"set, or run `ssw prices refresh {w.provider}`"
                if spec.api_key_env
                else f"run `ssw prices refresh {w.provider}`"
            )
        else:
            how = f"write it in registry/providers/{w.provider}.toml"
        out.append(
            f"{key}: {w.provider} {w.model} has no known price; the ledger will refuse it "
            f"({how}, or set [ledger] allow_unpriced = true)"
        )
    return out


def _rule_warnings(policy: Policy) -> list[str]:
    """Rules that can never match: beyond the ladder, or every step they cover taken earlier."""
    first: dict[tuple[StepType, int], int] = {}
    covers: dict[int, list[tuple[StepType, int]]] = {}
    for level in policy.levels:
        for step_type in StepType:
            for i, rule in enumerate(policy.rules):
                if rule.matches(step_type, level):
                    first.setdefault((step_type, level), i)
                    covers.setdefault(i, []).append((step_type, level))
    top = len(policy.escalation.ladder) - 1
    out: list[str] = []
    for i, _rule in enumerate(policy.rules):
        cells = covers.get(i, [])
        if not cells:
            out.append(
                f"rules[{i}] can never match: it asks for escalation levels "
                f"the ladder does not reach (levels 0..{top})"
            )
            continue
        winners = sorted({first[cell] for cell in cells})
        if i not in winners:
            earlier = ", ".join(f"rules[{j}]" for j in winners)
            verb = "takes" if len(winners) == 1 else "take"
            out.append(f"rules[{i}] can never match: {earlier} {verb} every step it covers")
    return out


def _name_warnings(policy: Policy, used: set[str]) -> list[str]:
    out: list[str] = []
    for i, rule in enumerate(policy.rules):
        if rule.worker not in policy.workers:
            out.append(f"rules[{i}].worker: names {rule.worker!r}, which is not configured")
    for i, name in enumerate(policy.escalation.ladder):
        if name not in policy.workers:
            out.append(f"escalation.ladder[{i}]: names {name!r}, which is not configured")
    for name in policy.workers:
        if name not in used:
            out.append(f"workers.{name}: never used; no step routes to it and it is not a reviewer")
    return out


def _fallback_warnings(policy: Policy) -> list[str]:
    """A fallback on the same provider as its worker goes down with it in an outage."""
    out = []
    for name, worker in policy.workers.items():
        for i, other in enumerate(worker.fallback):
            backup = policy.workers.get(other)
            if backup is not None and backup.provider == worker.provider:
                out.append(
                    f"workers.{name}.fallback[{i}]: {other!r} is on the same provider "
                    f"({worker.provider}); an outage of {worker.provider} takes both"
                )
    return out


def _review_warnings(
    policy: Policy, reviewer: WorkerInfo | None, second: WorkerInfo | None
) -> list[str]:
    if policy.review is None or reviewer is None or second is None:
        return []
    if reviewer.family is not None and reviewer.family == second.family:
        return [
            f"review.second_opinion: {second.name!r} is in the same model family "
            f"({second.family}) as the reviewer {reviewer.name!r}; pick another family"
        ]
    return []


def _limit_warnings(policy: Policy) -> list[str]:
    limits, rungs = policy.limits, len(policy.escalation.ladder)
    if limits.steps_per_rung * rungs > limits.max_steps:
        return [
            f"limits: max_steps {limits.max_steps} is less than steps_per_rung "
            f"{limits.steps_per_rung} x {rungs} rungs; the last rung may arrive with fewer steps"
        ]
    return []


def check_policy(policy: Policy, registry: Mapping[str, ProviderSpec]) -> PolicyCheck:
    models = {name: _lookup(registry, w) for name, w in policy.workers.items()}
    infos = {name: _info(name, w, models[name]) for name, w in policy.workers.items()}
    rows: list[RouteRow] = []
    warnings: list[str] = []
    for level in policy.levels:
        for step_type in StepType:
            name = route(policy, step_type, level)
            rows.append(RouteRow(step_type, level, infos.get(name) if name else None))
            if name is None:
                warnings.append(f"no worker for step type {step_type.value!r} at level {level}")
    review = policy.review
    reviewer = infos.get(review.reviewer) if review else None
    second = infos.get(review.second_opinion) if review and review.second_opinion else None
    used = {row.worker.name for row in rows if row.worker is not None}
    used |= {info.name for info in (reviewer, second) if info is not None}
    used |= {other for name in used for other in fallback_chain(policy, name)}
    warnings += _rule_warnings(policy)
    warnings += _name_warnings(policy, used)
    for name, w in policy.workers.items():
        allow = policy.ledger.allow_unpriced
        warnings += _worker_warnings(name, w, models[name], registry, allow)
    warnings += _review_warnings(policy, reviewer, second)
    warnings += _limit_warnings(policy)
    warnings += _fallback_warnings(policy)
    chains = tuple(
        (name, fallback_chain(policy, name)[1:]) for name, w in policy.workers.items() if w.fallback
    )
    memory = policy.escalation.memory
    return PolicyCheck(tuple(rows), reviewer, second, tuple(warnings), chains, memory)


_COLUMNS = ("level", "step", "worker", "provider", "model", "effort", "in $/M", "out $/M")


def _cells(level: str, step: str, info: WorkerInfo | None) -> tuple[str, ...]:
    if info is None:
        return (level, step, "(none)", "", "", "", "", "")
    return (
        level,
        step,
        info.name,
        info.provider,
        info.model,
        info.effort,
        info.input_price,
        info.output_price,
    )


def render_policy_check(check: PolicyCheck) -> str:
    table: list[tuple[str, ...]] = [_COLUMNS]
    table += [_cells(str(r.level), r.step_type.value, r.worker) for r in check.rows]
    if check.reviewer is not None:
        table.append(_cells("-", "reviewer", check.reviewer))
    if check.second_opinion is not None:
        table.append(_cells("-", "2nd opinion", check.second_opinion))
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    if check.fallbacks:
        lines.append("\nfallbacks, when a worker's provider fails:")
        lines += [f"  {name} -> {' -> '.join(chain)}" for name, chain in check.fallbacks]
    if check.memory:
        lines.append(
            "\ntier memory: on; a run starts on the lowest rung each of the repository's last "
            "3 done runs of its kind needed (a skipped rung saves only where it would have failed)"
        )
    if check.warnings:
        lines.append(f"\n{len(check.warnings)} warning(s):")
        lines += [f"  warning: {w}" for w in check.warnings]
    else:
        lines.append("\nno warnings")
    return "\n".join(lines)
