"""Routing policies: which worker (provider, model, effort) takes each step.

A policy is a TOML file; `load_policy` validates it so the Router always has an answer.
`policy.check` compares a loaded policy with the registry without calling any model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, Field, PrivateAttr

from stepswitch.errors import ConfigError, UsageError
from stepswitch.registry.presets import (
    EFFORT_ORDER,
    BaseUrl,
    Effort,
    ProviderSpec,
    WireFormatName,
    load_registry,
)
from stepswitch.steps import StepType
from stepswitch.util.config_model import Strict, validate
from stepswitch.util.toml import read_toml

POLICY_DOCS = "docs/decisions/0003-policy-format.md"
# The source of a policy built from `ssw run --model PROVIDER:MODEL_ID`: no file behind it.
MODEL_FLAG = "--model"


# strict: TOML `true` must not pass as the integer 1, nor `"30"` or `true` as 30.0 or 1.0 seconds.
Count = Annotated[int, Field(gt=0, strict=True)]
Level = Annotated[int, Field(ge=0, strict=True)]
Seconds = Annotated[float, Field(gt=0, strict=True, allow_inf_nan=False)]
# A run's model calls, from the file or --max-steps: bounded, so a typo is refused, not a run
# that would never stop on its steps.
MAX_STEPS = 10_000


def _as_list(value: object) -> object:
    # `escalations = 1` and `escalations = [1, 2]` mean the same kind of thing.
    return [value] if isinstance(value, int) and not isinstance(value, bool) else value


class WorkerConfig(Strict):
    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    effort: Effort | None = None  # None: send no effort field
    max_output_tokens: Count
    temperature: float | None = Field(default=None, ge=0, le=2, strict=True)  # None: default
    timeout: Seconds  # per call
    base_url: BaseUrl | None = None  # None: the preset's base_url
    wire_format: WireFormatName | None = None  # None: the model's or provider's default
    # Opt-outs, on by default; say why in a comment beside them. cache = false: no prompt-cache
    # markers (Anthropic). carry_reasoning = false: the provider's reasoning state (signed
    # thinking, encrypted reasoning, thought signatures) is not sent back inside a tool loop.
    cache: bool = Field(default=True, strict=True)
    carry_reasoning: bool = Field(default=True, strict=True)
    # Workers that take this worker's step, in order, when its provider fails (ADR 0038): an
    # HTTP 429 or 5xx past the retries, a timeout, an endpoint that does not answer. Each
    # fallback's own fallbacks follow it (fallback_chain).
    fallback: tuple[Annotated[str, Field(min_length=1)], ...] = ()


class When(Strict):
    step_type: tuple[StepType, ...] | None = Field(default=None, min_length=1)  # None: any
    escalations: Annotated[
        Annotated[tuple[Level, ...], Field(min_length=1)] | None, BeforeValidator(_as_list)
    ] = None  # None: any level


class Rule(Strict):
    when: When = When()
    worker: str = Field(min_length=1)

    def matches(self, step_type: StepType, level: int) -> bool:
        steps, levels = self.when.step_type, self.when.escalations
        return (steps is None or step_type in steps) and (levels is None or level in levels)


class Escalation(Strict):
    after_gate_failures: Count = 2
    # A rung's change the reviewer rejects goes back to it to edit, this many times in all;
    # then the next rung takes over, and past the last the run ends `rejected` (ADR 0054).
    after_review_rejections: Count = 2
    ladder: tuple[str, ...] = Field(min_length=1)  # rung 0 first; level k: ladder[k] takes over
    # Start on the rung the repository's recent runs of this kind needed (ADR 0039); off by default.
    memory: bool = Field(default=False, strict=True)


class Limits(Strict):
    # The least output cap a call is lowered to when its own does not fit the budget; below it
    # the call is refused (ADR 0013).
    min_output_tokens: Count = 1024
    max_steps: Annotated[int, Field(gt=0, le=MAX_STEPS, strict=True)] = 40
    steps_per_rung: Count = 15  # a rung cannot spend the steps the next rung needs
    wall_time_s: Seconds = 1800.0
    # None: no limit
    budget_usd: float | None = Field(default=None, gt=0, strict=True, allow_inf_nan=False)


class Review(Strict):
    reviewer: str = Field(min_length=1)
    second_opinion: str | None = Field(default=None, min_length=1)


class Ledger(Strict):
    allow_unpriced: bool = False
    on_lost_usage: Literal["stop", "continue"] = "stop"


class Policy(Strict):
    workers: dict[str, WorkerConfig] = Field(min_length=1)
    rules: tuple[Rule, ...] = ()
    escalation: Escalation
    limits: Limits = Limits()
    review: Review | None = None
    ledger: Ledger = Ledger()
    _source: str = PrivateAttr(default="(policy)")  # the file, for error messages
    # The command-line limits in force (--max-steps, --budget-usd) and the policy as its file
    # had it before them: a continued run applies today's flags to that, not to the earlier
    # run's already lowered limits.
    _flags: dict[str, Any] = PrivateAttr(default_factory=dict)
    _before_flags: dict[str, Any] | None = PrivateAttr(default=None)

    @property
    def source(self) -> str:
        return self._source

    @property
    def flags(self) -> dict[str, Any]:
        return dict(self._flags)

    @property
    def before_flags(self) -> dict[str, Any] | None:
        return self._before_flags

    @property
    def in_memory(self) -> bool:
        """Built from --model, not read from a file: its source is no path."""
        return self._source.startswith(f"{MODEL_FLAG} ")

    @property
    def levels(self) -> range:
        """Escalation levels the policy must answer for: one per ladder rung."""
        return range(len(self.escalation.ladder))


def route(policy: Policy, step_type: StepType, level: int) -> str | None:
    """The worker name for a step: first matching rule, else the ladder above level 0."""
    for rule in policy.rules:
        if rule.matches(step_type, level):
            return rule.worker
    if level >= 1:
        return policy.escalation.ladder[min(level, len(policy.escalation.ladder) - 1)]
    return None


def fallback_chain(policy: Policy, name: str) -> tuple[str, ...]:
    """`name`, then the workers that take its step when its provider fails, in order: its
    fallbacks, each followed by its own (depth first), none twice."""
    chain: list[str] = []

    def visit(worker: str) -> None:
        if worker in chain or worker not in policy.workers:
            return
        chain.append(worker)
        for other in policy.workers[worker].fallback:
            visit(other)

    visit(name)
    return tuple(chain)


# --- loading ---


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _allowed_keys(loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """The keys the table holding loc[-1] accepts, for the fix of an unknown key."""
    model: type[BaseModel] = Policy
    skip_dict_key = False
    for part in loc[:-1]:
        if skip_dict_key or isinstance(part, int):
            skip_dict_key = False
            continue
        field = model.model_fields.get(part)
        inner = _model_in(field.annotation) if field else None
        if field is None or inner is None:
            return ()
        skip_dict_key = get_origin(field.annotation) is dict  # `workers.<name>`: a name, not a key
        model = inner
    return tuple(model.model_fields)


def _fix_for(error: Any) -> str:
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden":
        allowed = _allowed_keys(loc)
        return f"remove it or use one of: {', '.join(allowed)}" if allowed else "remove it"
    if error["type"] == "missing":
        return "add it"
    if loc and loc[-1] == "effort":
        return f"use one of {', '.join(EFFORT_ORDER)}, or leave effort out"
    if error["type"] in ("float_type", "int_type"):
        return f"write a plain number, not {json.dumps(error['input'], default=str)}"
    return f"see {POLICY_DOCS}"


def _problem_of(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    return str(error["msg"])


def _check_names(policy: Policy, source: str) -> None:
    configured = ", ".join(sorted(policy.workers))
    named: list[tuple[str, str]] = [
        (f"rules[{i}].worker", rule.worker) for i, rule in enumerate(policy.rules)
    ]
    named += [(f"escalation.ladder[{i}]", w) for i, w in enumerate(policy.escalation.ladder)]
    if policy.review is not None:
        named.append(("review.reviewer", policy.review.reviewer))
        if policy.review.second_opinion is not None:
            named.append(("review.second_opinion", policy.review.second_opinion))
    for worker_name, worker in policy.workers.items():
        for i, fallback in enumerate(worker.fallback):
            key = f"workers.{worker_name}.fallback[{i}]"
            if fallback == worker_name or fallback in worker.fallback[:i]:
                twice = "itself" if fallback == worker_name else f"{fallback!r} twice"
                raise ConfigError(source, key, f"names {twice}", "list other workers, each once")
            named.append((key, fallback))
    for key, name in named:
        if name not in policy.workers:
            raise ConfigError(
                source,
                key,
                f"names worker {name!r}, which is not configured",
                f"add [workers.{name}] or use one of: {configured}",
            )


def _check_coverage(policy: Policy, source: str) -> None:
    # Levels >= 1 always fall back to the ladder; only level 0 can be left without a worker.
    for level in policy.levels:
        for step_type in StepType:
            if route(policy, step_type, level) is None:
                raise ConfigError(
                    source,
                    "rules",
                    f"no worker for step type {step_type.value!r} at escalation level {level}",
                    f'add a rule with when = {{ step_type = ["{step_type.value}"] }}, '
                    "or a last rule with no `when` to catch every step",
                )


def _check_limits(policy: Policy, source: str) -> None:
    limits = policy.limits
    if limits.steps_per_rung > limits.max_steps:
        raise ConfigError(
            source,
            "limits.steps_per_rung",
            f"is {limits.steps_per_rung}, more than max_steps ({limits.max_steps})",
            "make steps_per_rung at most max_steps",
        )


def _check_output_caps(
    policy: Policy, source: str, registry: Mapping[str, ProviderSpec] | None
) -> None:
    """A worker's max_output_tokens above its model's registry limit: a provider may take it
    and bill past what the model can write, or refuse every call (issue 22)."""
    presets = registry if registry is not None else load_registry()
    for name, worker in policy.workers.items():
        spec = presets.get(worker.provider)  # an unknown one is worker_models' error, later
        model = spec.models.get(worker.model) if spec is not None else None
        limit = model.max_output_tokens if model is not None else None
        if limit is not None and worker.max_output_tokens > limit:
            raise ConfigError(
                source,
                f"workers.{name}.max_output_tokens",
                f"is {worker.max_output_tokens:,}, above the {limit:,} output tokens "
                f"{worker.provider} {worker.model} allows (registry/providers/"
                f"{worker.provider}.toml)",
                f"set it to at most {limit}",
            )


def load_policy(path: Path, registry: Mapping[str, ProviderSpec] | None = None) -> Policy:
    """Read and validate a policy file; every problem is a ConfigError naming the key."""
    data = read_toml(path, "policy file", "name a TOML policy file, e.g. bench/policies/x.toml")
    return validate_policy(data, str(path), registry)


def validate_policy(
    data: dict[str, Any], source: str, registry: Mapping[str, ProviderSpec] | None = None
) -> Policy:
    """A policy from its table, checked as a file is: names, coverage and limits, and output
    caps against `registry` (None: the registry in use)."""
    policy = validate(Policy, data, source, problem=_problem_of, fix=_fix_for)
    policy._source = source
    _check_names(policy, source)
    _check_coverage(policy, source)
    _check_limits(policy, source)
    _check_output_caps(policy, source, registry)
    return policy


_OVERRIDE_FLAGS = {"max_steps": "--max-steps", "budget_usd": "--budget-usd"}


def with_overrides(policy: Policy, **limits: object) -> Policy:
    """The policy with command-line limits (`max_steps`, `budget_usd`) in force, validated as the
    file is. A lower --max-steps also lowers steps_per_rung to fit under it."""
    given = {k: v for k, v in limits.items() if v is not None}
    if not given:
        return policy
    data = policy.model_dump(mode="python", exclude_unset=True)
    data["limits"] = {**policy.limits.model_dump(), **given}
    steps = given.get("max_steps")
    if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0:
        data["limits"]["steps_per_rung"] = min(data["limits"]["steps_per_rung"], steps)
    try:
        flagged = validate_policy(data, policy.source)
        flagged._flags = given
        flagged._before_flags = policy.model_dump(mode="json")
        return flagged
    except ConfigError as exc:
        name = exc.key.removeprefix("limits.")
        if name in given:
            raise UsageError(f"{_OVERRIDE_FLAGS[name]} {given[name]!r}: {exc.problem}") from exc
        raise
