"""The simulated population's loopback server: chat-completions requests in, each answered by the
tier its model plays, with usage as a provider reports it (prompt tokens from the request's size,
cached tokens from a prefix cache of what this model was sent before, output and reasoning
tokens per tier). One server per task run; every call's dice are seeded by (population seed,
task, run, call), so a run is reproducible."""

from __future__ import annotations

import json
import random
import threading
from typing import Any

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.fakes.scripted import ScriptedReply, ScriptedToolCall, ScriptedUsage
from stepswitch.fakes.scripted import completion_body as _body
from stepswitch.sim.play import Play, Turn
from stepswitch.sim.population import Population, TierBehaviour
from stepswitch.sim.reference import TaskReference
from stepswitch.steps import StepType
from stepswitch.util.prefix import common_prefix_len


def _tokens(chars: int) -> int:
    return max(1, (chars + 3) // 4)  # 4 characters a token, as the scripted provider estimates


def _error(status: int, message: str) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "simulated"}})


class SimResponder:
    """Answers one task run's calls; `played` keeps what each call did, in order."""

    def __init__(self, population: Population, ref: TaskReference, run: int = 1) -> None:
        self.population = population
        self.ref = ref
        self.run = run
        self.played: list[Play] = []
        self._edit_attempts = 0
        self._last_prompt: dict[str, str] = {}  # per model: what its prefix cache holds
        self._lock = threading.Lock()

    def _rng(self, call: int) -> random.Random:
        return random.Random(f"{self.population.seed}/{self.ref.task}/{self.run}/{call}")

    def __call__(self, request: RecordedRequest) -> Reply:
        if request.method == "GET" and request.path.rstrip("/").endswith("/models"):
            return Reply(body={"object": "list", "data": self._models()})
        if not request.path.rstrip("/").endswith("/chat/completions"):
            return _error(404, f"simulated provider: no route {request.path}")
        try:
            body = request.json()
        except ValueError:
            return _error(400, "simulated provider: the body is not JSON")
        with self._lock:
            return self._answer(body)

    def _models(self) -> list[dict[str, Any]]:
        models = self.population.models
        return [{"id": m, "object": "model", "owned_by": "simulated"} for m in models]

    def _answer(self, body: dict[str, Any]) -> Reply:
        model = str(body.get("model", ""))
        effort = body.get("reasoning_effort")
        tier = self.population.tier_of(model, effort if isinstance(effort, str) else None)
        if tier is None:
            return _error(404, f"simulated provider: the population plays no model {model!r}")
        call = len(self.played) + 1
        turn = Turn(body, tier, self._rng(call), self.ref, self._edit_attempts + 1)
        play = turn.play()
        if play.step == StepType.EDIT.value and play.what != "done":
            self._edit_attempts += 1  # an attempt is an edit step's first turn
        self.played.append(play)
        prompt = _prompt_text(body)
        cached_chars = common_prefix_len(prompt, self._last_prompt.get(model, ""))
        self._last_prompt[model] = prompt
        reply = ScriptedReply(
            content=play.content,
            tool_calls=[ScriptedToolCall(name=n, arguments=a) for n, a in play.calls],
            usage=_usage(tier, prompt, cached_chars, play, turn.rng),
        )
        return Reply(body={**_body(reply, model, call, prompt, cached_chars), "id": f"sim-{call}"})


def _prompt_text(body: dict[str, Any]) -> str:
    """The prompt as a provider reads it: the system message, the tools, then the rest."""
    messages = body.get("messages") or []
    return json.dumps(messages[:1]) + json.dumps(body.get("tools") or []) + json.dumps(messages[1:])


def _usage(
    tier: TierBehaviour, prompt: str, cached_chars: int, play: Play, rng: random.Random
) -> ScriptedUsage:
    prompt_tokens = _tokens(len(prompt))
    written = _tokens(len(play.content) + len(json.dumps(play.calls)))
    jitter = rng.uniform(0.8, 1.2)  # calls of one tier differ, as a model's do
    return ScriptedUsage(
        prompt_tokens=prompt_tokens,
        cached_tokens=min(prompt_tokens, cached_chars // 4),
        completion_tokens=max(written, round(tier.output_tokens * jitter))
        + round(tier.reasoning_tokens * jitter),
        reasoning_tokens=round(tier.reasoning_tokens * jitter),
    )


def start_sim_server(
    population: Population, ref: TaskReference, run: int = 1
) -> tuple[LoopbackServer, SimResponder]:
    responder = SimResponder(population, ref, run)
    return LoopbackServer(responder).start(), responder
