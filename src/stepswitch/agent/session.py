"""One model call is one step, and one step enters the session once (`tool_step`,
`review_step`): route it, check the limits before it leaves, let the ledger admit each attempt
(lowering the output cap to what the budget fits, down to a floor), call the provider, price
what it used, stop the run at a call billed above its reservation, run the answer's tool calls
through the phase's callback (or judge the review's answer), and write the step's record once.
A step the run ended under (a signal while its tools ran) is written by `close`, so every call
is a record and the run's totals are the sums of the records (`totals_of`)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, field, replace

from stepswitch.agent.events import Events
from stepswitch.agent.ladder import Ladder
from stepswitch.agent.providers import ProviderFactory, provider_failure
from stepswitch.agent.step_facts import (
    CUT,
    OutputFailure,
    account,
    check_cut_replies,
    error_type,
    output_failure,
    server_of,
    tool_record,
)
from stepswitch.agent.tools.base import ToolResult
from stepswitch.errors import (
    ProviderError,
    RunStopped,
)
from stepswitch.ledger import (
    MIN_OUTPUT_TOKENS,
    Budget,
    BudgetExceeded,
    CallIntent,
    CallTracker,
    Ledger,
)
from stepswitch.ledger.overreport import stop_reason
from stepswitch.policy.model import Policy, fallback_chain
from stepswitch.policy.router import Router, WorkerChoice
from stepswitch.records.folder import RecordNotWritten
from stepswitch.records.run import RunIds, Totals, totals_of
from stepswitch.records.steps import ARGUMENT_CHARS, ModelStep, ReviewRecord
from stepswitch.registry.presets import (
    SCRIPTED_PROVIDER,
    SIM_PROVIDER,
    ModelSpec,
    Price,
    resolve_effort,
)
from stepswitch.steps import StepType
from stepswitch.util.prefix import common_prefix_len
from stepswitch.wire.types import (
    Completion,
    FinishReason,
    JsonSchemaFormat,
    Message,
    Request,
    ToolCall,
    ToolSpec,
)

# A refused call is resent with a lower cap at most this often: the cap only falls, and a second
# lowering is needed only when another process spent in between (or the body grew a byte).
MAX_LOWERINGS = 3


@dataclass(frozen=True)
class CallSpec:
    step_type: StepType
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    response_format: JsonSchemaFormat | None = None
    worker: str | None = None  # a named worker (reviewer, second opinion) instead of the router
    effort: str | None = None  # override: "none" when retrying cut-off thinking
    max_output_tokens: int | None = None  # override: a larger cap when retrying


# What the session knows of one call, before its tools ran: the step's own record type, so each
# fact is a typed attribute; `seq` is stamped when it is written.
CallFacts = ModelStep
ToolRunner = Callable[[ToolCall], ToolResult]  # the phase's: one tool call run in its workspace


@dataclass(frozen=True)
class ToolStep:
    """A tool loop's step as recorded: the answer, and either the results of its tool calls (in
    the order of `completion.message.tool_calls`) or why there was none to run."""

    completion: Completion
    failure: OutputFailure | None
    results: tuple[ToolResult, ...] = ()


def prompt_text(spec: CallSpec) -> str:
    """The prompt in the order a provider reads it (tool definitions, then the conversation):
    what the budget estimate sizes and what a prefix cache could serve."""
    tools = [(t.name, t.description, t.parameters) for t in spec.tools]
    turns = [
        (m.role, m.content, m.tool_call_id, [(c.name, c.arguments) for c in m.tool_calls])
        for m in spec.messages
    ]
    return json.dumps([spec.messages[0].content if spec.messages else "", tools, turns[1:]])


@dataclass(eq=False, kw_only=True)
class Session:
    ids: RunIds
    policy: Policy
    models: Mapping[str, ModelSpec]  # worker name -> its model's registry entry
    providers: ProviderFactory
    ledger: Ledger
    budgets: tuple[Budget, ...]
    events: Events
    deadline: float
    tags: Mapping[str, str] = field(default_factory=dict)  # copied: the caller's stays its own
    min_output_tokens: int = MIN_OUTPUT_TOKENS  # the floor a cap is lowered to (ADR 0013)
    # What must come before the first reply's tools run or a second call leaves, called once:
    # the pre-flight's verdict when it runs beside the first call (ADR 0088); its refusal ends
    # the run with the first step recorded
    settle: Callable[[], None] | None = None
    start_level: InitVar[int] = 0  # the rung the task starts on (tier memory)
    router: Router = field(init=False)
    ladder: Ladder = field(init=False)
    calls: int = field(default=0, init=False)  # model calls made, the one in flight included
    cut_replies: int = field(default=0, init=False)  # replies cut at the output cap so far
    _open: ModelStep | None = field(default=None, init=False)  # the call not yet recorded
    # worker -> why its provider failed, in this run
    _down: dict[str, str] = field(default_factory=dict, init=False)
    _last_prompt: dict[str, str] = field(default_factory=dict, init=False)

    def __post_init__(self, start_level: int) -> None:
        self.tags = dict(self.tags)
        self.router = Router(self.policy)
        self.ladder = Ladder(self.policy, start_level)
        self.events.follow(self.ladder)  # each event says the rung it happened on

    @property
    def totals(self) -> Totals:
        """What the recorded events add up to; nothing else changes a run's totals."""
        return totals_of(self.events.recorded)

    def choose(self, step_type: StepType, worker: str | None = None) -> WorkerChoice:
        if worker is not None:
            return WorkerChoice(worker, self.policy.workers[worker])
        return self.router.pick(step_type, self.ladder.level)

    def _check_limits(self, on_rung: bool) -> None:
        """Steps and time. Dollars are the ledger's: it admits or refuses each attempt."""
        limits = self.policy.limits
        if self.calls >= limits.max_steps:
            raise RunStopped("limit", f"the run used its {limits.max_steps} steps (max_steps)")
        if time.monotonic() >= self.deadline:
            raise RunStopped("limit", f"the run used its wall time ({limits.wall_time_s:g} s)")
        if on_rung:  # only the rung's own edit, run and triage calls use its steps
            self.ladder.take_step()

    def tool_step(self, spec: CallSpec, run_tool: ToolRunner) -> ToolStep:
        """One step of a tool loop, recorded once: the call, then each of its answer's tool calls
        through `run_tool`, on the open step as each ends (a run ended by a later one still
        records it); or, when the answer holds none to run, the model-output failure."""
        completion, facts = self._call(spec)
        self._settled()
        failure = output_failure(completion)
        results: list[ToolResult] = []
        for call in completion.message.tool_calls if failure is None else ():
            self.events.progress("tool", f"{call.name} {call.arguments[:ARGUMENT_CHARS]}")
            result = run_tool(call)
            facts.tool_calls.append(tool_record(call, result))
            results.append(result)
        self._record(facts, failure=failure)
        self._count_cut(failure, facts)
        return ToolStep(completion, failure, tuple(results))

    def review_step(self, spec: CallSpec, judge: Callable[[str], ReviewRecord]) -> ReviewRecord:
        """One review step, recorded once with the verdict `judge` reads from its answer; an
        answer with no verdict in it ("unparsed") is a model-output failure."""
        completion, facts = self._call(spec)
        self._settled()
        review = judge(completion.answer)
        failure: OutputFailure | None = "review_not_json" if review.verdict == "unparsed" else None
        if completion.finish_reason is FinishReason.LENGTH and review.verdict == "unparsed":
            failure = "cut_at_output_cap"
        self._record(facts, review=review, failure=failure)
        self._count_cut(failure, facts)
        return review

    def _settled(self) -> None:
        """`settle`, the first time only."""
        settle, self.settle = self.settle, None
        if settle is not None:
            settle()

    def _count_cut(self, failure: OutputFailure | None, facts: CallFacts) -> None:
        """A run whose replies keep being cut at the output cap stops, saying so (ADR 0062)."""
        if failure in CUT:
            self.cut_replies += 1
            check_cut_replies(self.cut_replies, facts)

    def _call(self, spec: CallSpec) -> tuple[Completion, CallFacts]:
        """The step on its worker; when that worker's provider fails (`provider_failure`), on
        its fallbacks in order, each a step of its own that says where it came from. A worker
        whose provider failed is not asked again in this run (ADR 0038)."""
        first = self.choose(spec.step_type, spec.worker)
        chain = fallback_chain(self.policy, first.name)
        failed: list[str] = []  # "worker: why", for each worker of the chain that failed
        for position, name in enumerate(chain):
            if name in self._down:
                failed.append(f"{name}: {self._down[name]}")
                continue
            came_from = (first.name, "; ".join(failed)) if position else None
            try:
                return self._call_on(WorkerChoice(name, self.policy.workers[name]), spec, came_from)
            except ProviderError as exc:
                why = provider_failure(exc.__cause__ or exc, self.deadline)
                if why is None:
                    raise
                self._down[name] = f"{why} (step {self.calls})"
                failed.append(f"{name}: {why}")
                if len(chain) == 1:
                    raise  # no fallback named: the worker's own error, as it was
                left = [n for n in chain[position + 1 :] if n not in self._down]
                if left:  # a notice: said whatever the display, never silent
                    self.events.notice(
                        f"step {self.calls}: {name} failed ({why}); {left[0]} takes it"
                    )
        raise RunStopped(
            "error",
            f"no worker left for the {spec.step_type.value} step: {'; '.join(failed)}",
        )

    def _call_on(
        self, choice: WorkerChoice, spec: CallSpec, came_from: tuple[str, str] | None
    ) -> tuple[Completion, CallFacts]:
        """One model call on `choice`; `came_from` is (the worker the step was routed to, why
        it and any fallback before this one failed) when this is a fallback."""
        if self.calls:
            self._settled()  # a second call (a fallback's included) waits for it too
        model = self.models[choice.name]
        w = choice.worker
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
            cache=w.cache,
            carry_reasoning=w.carry_reasoning,
            step_type=spec.step_type,
        )
        routed_to = came_from[0] if came_from else choice.name
        # A named worker (reviewer, second opinion) is outside the ladder, whatever its name.
        self._check_limits(
            on_rung=spec.worker is None and self.ladder.counts(spec.step_type, routed_to)
        )
        prompt = prompt_text(spec)
        previous = self._last_prompt.get(choice.name, "")
        self._last_prompt[choice.name] = prompt
        self.calls += 1
        facts = self._open = ModelStep(
            step=self.calls,
            step_type=spec.step_type.value,
            worker=choice.name,
            provider=w.provider,
            model=w.model,
            effort=effort,
            scripted=w.provider in (SCRIPTED_PROVIDER, SIM_PROVIDER),
            simulated=w.provider == SIM_PROVIDER,
            prompt_repeat_share=common_prefix_len(prompt, previous) / max(1, len(prompt)),
            fallback_from=came_from[0] if came_from else None,
            fallback_reason=came_from[1] if came_from else None,
            max_output_tokens=max_out,
        )
        intent = CallIntent(
            run_id=self.ids.run_id,
            task_id=self.ids.task_id,
            bench_id=self.ids.bench_id,
            step=self.calls,
            step_type=spec.step_type.value,
            worker=choice.name,
            provider=w.provider,
            model=w.model,
            price=model.price if isinstance(model.price, Price) else None,
            max_output_tokens=max_out,
            tags={**self.tags, **({"fallback_from": came_from[0]} if came_from else {})},
            budgets=self.budgets,
            context_window=model.context_window,
            min_output_tokens=self.min_output_tokens,
        )
        line = f"step {self.calls} {spec.step_type.value} {choice.name} ({w.model})"
        if came_from:
            line += f", fallback: {came_from[1]}"  # "main: HTTP 503 ...", the workers left
        self.events.progress("step", line)
        began = time.monotonic()
        with CallTracker(self.ledger, intent) as tracker:
            try:
                completion = self._complete(choice, request, tracker, facts)
            except BaseException as exc:
                facts.duration_s = time.monotonic() - began
                tracker.close(f"the call raised {type(exc).__name__}")
                account(facts, tracker.rows, None)
                facts.error_type = error_type(exc)
                if isinstance(exc, ProviderError):
                    facts.request_id = exc.request_id
                if not isinstance(exc, Exception):
                    raise  # a signal: the step stays open and `close` writes it, signals held
                if isinstance(exc, ProviderError):  # say which worker, whatever failed
                    named = type(exc)(
                        f"worker {choice.name!r} ({w.provider} {w.model}): {exc}",
                        status=exc.status,
                        raw_body=exc.raw_body,
                        request_id=exc.request_id,
                    )
                    self._record(facts, error=str(named))
                    raise named from exc
                self._record(facts, error=str(exc))
                raise
        facts.duration_s = time.monotonic() - began
        account(facts, tracker.rows, completion)
        stop = stop_reason(tracker.rows)  # billed past its reservation or its cap (ADR 0025)
        if stop is not None:
            self._record(facts)
            raise RunStopped("limit", stop)
        if tracker.lost_usage and self.policy.ledger.on_lost_usage == "stop":
            step = self._record(facts)
            high = step.cost.high if step.cost else 0.0
            raise RunStopped(
                "limit",
                f"{w.provider} {w.model} reported no usage for step {step.step}: its cost is "
                f"only known to be at most ${high:.4f}; stopping "
                '(set [ledger] on_lost_usage = "continue" to go on, counting the high bound)',
            )
        return completion, facts

    def _complete(
        self, choice: WorkerChoice, request: Request, tracker: CallTracker, facts: CallFacts
    ) -> Completion:
        """Send the call; when the ledger refuses it and a cap at or above the floor fits every
        budget, resend it with that cap (the refused attempt never left the machine)."""
        w = choice.worker
        provider = self.providers(choice.name, w)
        facts.server_address, facts.server_port = server_of(provider)
        asked = request.max_output_tokens
        for lowered in range(MAX_LOWERINGS + 1):
            try:
                return provider.complete(
                    request, deadline=self.deadline, timeout=w.timeout, hooks=tracker.hooks
                )
            except BudgetExceeded as refused:
                cap = refused.lowered_cap
                if cap is None or lowered == MAX_LOWERINGS:
                    raise
                tracker.lower_cap(cap)
                request = replace(request, max_output_tokens=cap)
                facts.max_output_tokens = cap
                facts.note = (
                    f"output cap lowered from {asked:,} to {cap:,} tokens to fit "
                    f"{refused.budget.describe()}"
                )  # the latest lowering: "from" stays the cap asked for
        raise AssertionError("unreachable")  # the last pass returns or raises

    def _record(
        self,
        facts: CallFacts,
        *,
        failure: OutputFailure | None = None,
        review: ReviewRecord | None = None,
        error: str | None = None,
    ) -> ModelStep:
        """Write the step once (the one place a ModelStep is made for steps.jsonl), with its
        tool calls (`facts.tool_calls`) and what became of its answer."""
        if facts is self._open:
            self._open = None
        step = ModelStep.model_validate(
            {
                **dict(facts),  # the typed attributes as they are, validated once more
                "model_output_failure": failure,
                "review": review,
                "error": error,
            }
        )
        return self.events.emit(step)

    def close(self, reason: str) -> Totals:
        """At the run's end: write the step the run ended under, if any, then the totals."""
        if self._open is not None:
            # steps.jsonl not writable: the finish's write below says so, and where the work is.
            with contextlib.suppress(RecordNotWritten):
                self._record(self._open, error=f"the run ended during this step: {reason}")
        return self.totals
