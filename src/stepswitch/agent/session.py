"""One model call is one step: route it, check the limits and the budget before it leaves,
call the provider, price what it used, record and print it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stepswitch.errors import ConfigError, RungExhausted, RunStopped
from stepswitch.fakes.scripted import SCRIPTED_PROVIDER
from stepswitch.ledger import Budget, CallIntent, CallRow, CallTracker, Ledger
from stepswitch.policy.model import Policy, Router, StepType, WorkerChoice
from stepswitch.records import RunFolder, StepRecord, ToolCallRecord
from stepswitch.registry.presets import ModelSpec, Price, ProviderSpec, get_model, resolve_effort
from stepswitch.util.prefix import common_prefix_len
from stepswitch.wire.client import HttpProvider, new_http_client
from stepswitch.wire.open import api_key_from_env, open_provider
from stepswitch.wire.types import Completion, JsonSchemaFormat, Message, Request, ToolSpec


@dataclass(frozen=True)
class CallSpec:
    step_type: StepType
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    response_format: JsonSchemaFormat | None = None
    worker: str | None = None  # a named worker (reviewer, second opinion) instead of the router
    effort: str | None = None  # override: "none" when retrying cut-off thinking
    max_output_tokens: int | None = None  # override: a larger cap when retrying


@dataclass
class Totals:
    steps: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0  # certain
    cost_high_usd: float = 0.0  # with calls whose usage was lost counted at their reservation
    unpriced_steps: int = 0
    by_worker: dict[str, float] = field(default_factory=dict)


def prompt_text(spec: CallSpec) -> str:
    """The prompt in the order a provider reads it (tool definitions, then the conversation):
    what the budget estimate sizes and what a prefix cache could serve."""
    tools = [(t.name, t.description, t.parameters) for t in spec.tools]
    turns = [
        (m.role, m.content, m.tool_call_id, [(c.name, c.arguments) for c in m.tool_calls])
        for m in spec.messages
    ]
    return json.dumps([spec.messages[0].content if spec.messages else "", tools, turns[1:]])


class Session:
    def __init__(
        self,
        *,
        run_id: str,
        policy: Policy,
        registry: Mapping[str, ProviderSpec],
        folder: RunFolder,
        deadline: float,
        print_line: Callable[[str], None],
        ledger: Ledger,
        budgets: tuple[Budget, ...] = (),
        tags: Mapping[str, str] | None = None,
        bench_id: str | None = None,
        scripted_base_url: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.run_id = run_id
        self.policy = policy
        self.registry = registry
        self.folder = folder
        self.deadline = deadline
        self.print_line = print_line
        self.scripted_base_url = scripted_base_url
        self.ledger = ledger
        self.budgets = budgets
        self.tags = dict(tags or {})
        self.task_id = run_id  # `ssw run` is one task; the bench gives each task its own id
        self.bench_id = bench_id
        self.env = env
        self.router = Router(policy)
        self.level = 0
        self.rung_steps = 0
        self.gate_failures_on_rung = 0
        self.totals = Totals()
        self._providers: dict[str, HttpProvider] = {}
        self._http = new_http_client()  # one connection pool (and TLS context) for every worker
        self._last_prompt: dict[str, str] = {}
        self._check_workers()

    # --- workers ---

    def _model(self, choice: WorkerChoice) -> tuple[ProviderSpec, ModelSpec]:
        w = choice.worker
        if w.provider not in self.registry:
            raise ConfigError(
                self.policy.source,
                f"workers.{choice.name}.provider",
                f"unknown provider {w.provider!r}",
                "run `ssw models`",
            )
        spec = self.registry[w.provider]
        return spec, get_model(spec, w.model)

    def _check_workers(self) -> None:
        """Before any call: unpriced models (unless allowed) and missing keys stop the run."""
        for name, worker in self.policy.workers.items():
            spec, model = self._model(WorkerChoice(name, worker))
            if not model.priced and not self.policy.ledger.allow_unpriced:
                raise ConfigError(
                    self.policy.source,
                    f"workers.{name}",
                    f"{worker.provider} {worker.model} has no known price",
                    f"run `ssw prices refresh {worker.provider}` or set [ledger] allow_unpriced",
                )
            api_key_from_env(spec, self.env)

    @property
    def is_scripted(self) -> bool:
        return any(w.provider == SCRIPTED_PROVIDER for w in self.policy.workers.values())

    def choose(self, step_type: StepType, worker: str | None = None) -> WorkerChoice:
        if worker is not None:
            return WorkerChoice(worker, self.policy.workers[worker])
        return self.router.pick(step_type, self.level)

    def scripted(self, choice: WorkerChoice) -> bool:
        return choice.worker.provider == SCRIPTED_PROVIDER

    def _provider(self, choice: WorkerChoice) -> HttpProvider:
        if choice.name not in self._providers:
            w = choice.worker
            base = w.base_url
            if w.provider == SCRIPTED_PROVIDER:
                base = self.scripted_base_url
            self._providers[choice.name] = open_provider(
                self.registry[w.provider],
                w.model,
                base_url=base,
                wire_format=w.wire_format,
                env=self.env,
                http=self._http,
            )
        return self._providers[choice.name]

    def close(self) -> None:
        self._http.close()

    # --- escalation ---

    def escalate(self, why: str) -> None:
        """The next rung takes the task over; past the last rung the run stops."""
        if self.level + 1 >= len(self.policy.escalation.ladder):
            raise RunStopped("gates_failed", f"{why}, and no rung is left to take over")
        self.level += 1
        self.rung_steps = 0
        self.gate_failures_on_rung = 0
        rung = self.policy.escalation.ladder[self.level]
        self.print_line(f"  ^ escalation {self.level}: {why}; {rung} takes the task over")

    # --- one step ---

    def _check_limits(self, on_rung: bool) -> None:
        """Steps and time. Dollars are the ledger's: it admits or refuses each attempt."""
        limits = self.policy.limits
        if self.totals.steps >= limits.max_steps:
            raise RunStopped("limit", f"the run used its {limits.max_steps} steps (max_steps)")
        if time.monotonic() >= self.deadline:
            raise RunStopped("limit", f"the run used its wall time ({limits.wall_time_s:g} s)")
        if on_rung and self.rung_steps >= limits.steps_per_rung:
            raise RungExhausted(f"rung {self.level} used its {limits.steps_per_rung} steps")

    def call(self, spec: CallSpec) -> tuple[Completion, StepRecord]:
        choice = self.choose(spec.step_type, spec.worker)
        _, model = self._model(choice)
        w = choice.worker
        price = model.price if isinstance(model.price, Price) else None
        max_out = spec.max_output_tokens or w.max_output_tokens
        effort = resolve_effort(model, spec.effort or w.effort)
        request = Request(
            model=w.model,
            messages=spec.messages,
            tools=spec.tools,
            tool_choice="auto" if spec.tools else None,
            response_format=spec.response_format,
            reasoning_effort=effort,
            max_output_tokens=max_out,
            temperature=w.temperature,
        )
        prompt = prompt_text(spec)
        # Reviewer and second opinion are named workers, outside the ladder: not the rung's steps.
        on_rung = spec.worker is None
        self._check_limits(on_rung)
        previous = self._last_prompt.get(choice.name, "")
        self._last_prompt[choice.name] = prompt
        self.totals.steps += 1
        self.rung_steps += on_rung
        record = StepRecord(
            run_id=self.run_id,
            index=self.totals.steps,
            step_type=spec.step_type.value,
            worker=choice.name,
            provider=w.provider,
            model=w.model,
            effort=effort,
            escalation=self.level,
            scripted=self.scripted(choice),
            prompt_repeat_share=common_prefix_len(prompt, previous) / max(1, len(prompt)),
        )
        intent = CallIntent(
            run_id=self.run_id,
            task_id=self.task_id,
            bench_id=self.bench_id,
            step=record.index,
            step_type=record.step_type,
            worker=choice.name,
            provider=w.provider,
            model=w.model,
            price=price,
            max_output_tokens=max_out,
            tags=dict(self.tags),
            budgets=self.budgets,
            context_window=model.context_window,
        )
        began = time.monotonic()
        with CallTracker(self.ledger, intent) as tracker:
            try:
                completion = self._provider(choice).complete(
                    request, deadline=self.deadline, timeout=w.timeout, hooks=tracker.hooks
                )
            except Exception as exc:
                record.duration_s = time.monotonic() - began
                record.error = str(exc)
                tracker.close(f"the call raised {type(exc).__name__}")
                self._account(record, tracker.rows, None)
                self.finish(record)
                raise
        record.duration_s = time.monotonic() - began
        self._account(record, tracker.rows, completion)
        if tracker.lost_usage and self.policy.ledger.on_lost_usage == "stop":
            self.finish(record)
            raise RunStopped(
                "limit",
                f"{record.provider} {record.model} reported no usage for step {record.index}: "
                f"its cost is only known to be at most ${record.cost_high_usd or 0:.4f}; stopping "
                '(set [ledger] on_lost_usage = "continue" to go on, counting the high bound)',
            )
        return completion, record

    def _account(
        self, record: StepRecord, rows: list[CallRow], completion: Completion | None
    ) -> None:
        """Dollars from the ledger's rows (retries included); tokens from the final answer."""
        record.attempts = len(rows)
        priced = [r for r in rows if r.low_usd is not None]
        if rows and len(priced) < len(rows):
            record.cost_usd = record.cost_high_usd = None
            self.totals.unpriced_steps += 1
        else:
            low = sum(r.low_usd or 0.0 for r in priced)
            high = sum(r.high_usd or 0.0 for r in priced)
            record.cost_usd = low
            record.cost_high_usd = high if high > low else None
            self.totals.cost_usd += low
            self.totals.cost_high_usd += high
            by = self.totals.by_worker
            by[record.worker] = by.get(record.worker, 0.0) + low
        if completion is None:
            return
        record.finish_reason = completion.finish_reason.value
        record.request_id = completion.request_id
        usage = completion.usage
        if usage is None:
            record.usage_reported = False
            record.note = "no usage reported: the cost is a range up to the reservation"
            return
        record.prompt_tokens = usage.prompt_tokens
        record.cached_tokens = usage.cached_tokens
        record.cache_write_tokens = usage.cache_write_tokens
        record.completion_tokens = usage.completion_tokens
        record.reasoning_tokens = usage.reasoning_tokens
        self.totals.prompt_tokens += usage.prompt_tokens
        self.totals.cached_tokens += usage.cached_tokens
        self.totals.completion_tokens += usage.completion_tokens

    def record_event(self, step_type: str, **fields: Any) -> StepRecord:
        """A record that is no model call (gates, review verdicts), placed after the last step."""
        record = StepRecord(
            run_id=self.run_id,
            index=self.totals.steps,
            step_type=step_type,
            worker="-",
            provider="-",
            model="-",
            escalation=self.level,
            scripted=self.is_scripted,
            **fields,
        )
        self.folder.append_step(record)
        return record

    def finish(self, record: StepRecord) -> None:
        self.folder.append_step(record)
        self.print_line(format_step(record))


def _money(low: float | None, high: float | None = None) -> str:
    if low is None:
        return "unpriced"
    return f"${low:.4f}" if high is None else f"${low:.4f}-{high:.4f}"


def _tool_outcome(t: ToolCallRecord) -> str:
    if t.exit_code is not None:
        return f"{t.name} exit {t.exit_code}"
    return t.name + ("" if t.ok else " refused" if t.refused else " failed")


def format_step(r: StepRecord) -> str:
    model = r.model.rsplit("/", 1)[-1]
    tokens = f"in {r.prompt_tokens:,} ({r.cached_tokens:,} cached) out {r.completion_tokens:,}"
    if not r.usage_reported:
        tokens = "usage not reported"
    tools = ", ".join(map(_tool_outcome, r.tool_calls))
    outcome = r.error or r.model_output_failure or tools or r.note
    if r.review is not None:
        outcome = f"verdict {r.review.verdict}"
    label = " [scripted]" if r.scripted else ""
    return (
        f"{r.index:>3} {r.step_type:<9} {r.worker:<10} {model:<26} {tokens:<36} "
        f"{_money(r.cost_usd, r.cost_high_usd):>9}  {outcome}{label}"
    )
