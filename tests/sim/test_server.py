"""The simulated population's server as ssw's own HTTP client meets it: the chat-completions wire
format, the step each request is for, usage with a real prefix cache, and the same dice for the
same (seed, task, run, call)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from stepswitch.agent.prompts import REVIEW_SCHEMA, SYSTEM_PROMPT
from stepswitch.agent.providers import HttpProviders
from stepswitch.agent.tools.execute import tool_spec
from stepswitch.errors import ConfigError, SswError
from stepswitch.policy.model import WorkerConfig
from stepswitch.registry.presets import SIM_PROVIDER, load_registry
from stepswitch.sim.population import Population, load_population
from stepswitch.sim.reference import TaskReference
from stepswitch.sim.server import SimResponder, start_sim_server
from stepswitch.steps import STEPS, StepType
from stepswitch.wire.types import Completion, JsonSchemaFormat, Message, Request

from .conftest import population_file

BEFORE = "def add(a, b):\n    return a - b\n"
AFTER = "def add(a, b):\n    return a + b\n"
REF = TaskReference("general/add", {"calc.py": AFTER}, {"calc.py": BEFORE})


def _request(model: str, step: StepType, context: str = "") -> Request:
    user = STEPS[step].instruction + "\n" + context
    messages = (Message("system", SYSTEM_PROMPT), Message("user", user))
    if step is StepType.REVIEW:
        schema = JsonSchemaFormat("review", REVIEW_SCHEMA)
        return Request(model, messages, response_format=schema)
    tools = tuple(tool_spec(name) for name in sorted(STEPS[step].tools))
    return Request(model, messages, tools=tools)


def _call(base_url: str, request: Request) -> Completion:
    providers = HttpProviders(load_registry(), env={}, base_urls={SIM_PROVIDER: base_url})
    try:
        worker = WorkerConfig(
            provider="sim", model=request.model, max_output_tokens=1024, timeout=30
        )
        provider = providers("w", worker)
        return provider.complete(request, deadline=time.monotonic() + 30)
    finally:
        providers.close()


def _edit_on_a_sim_server(population: Population) -> tuple[Completion, SimResponder]:
    """One edit step of sim-mid, answered by a sim server of `population`, and its responder."""
    server, responder = start_sim_server(population, REF)
    try:
        return _call(server.base_url, _request("sim-mid", StepType.EDIT)), responder
    finally:
        server.stop()


def test_an_edit_of_a_sure_tier_writes_the_reference_through_the_real_client(tmp_path: Path):
    population = load_population(population_file(tmp_path, fix_rate=1.0))
    done, responder = _edit_on_a_sim_server(population)
    [call] = done.message.tool_calls
    assert (call.name, call.arguments) == (
        "write_file",
        '{"path": "calc.py", "content": "def add(a, b):\\n    return a + b\\n"}',
    )
    assert done.usage is not None and done.usage.prompt_tokens > 0
    assert done.usage.reasoning_tokens > 0
    assert done.usage.completion_tokens >= done.usage.reasoning_tokens
    assert [p.what for p in responder.played] == ["right"]


def test_a_tier_that_never_fixes_makes_a_wrong_change_instead(tmp_path: Path):
    population = load_population(population_file(tmp_path, fix_rate=0.0))
    done, responder = _edit_on_a_sim_server(population)
    assert responder.played[0].what in {"mutation", "stale"}  # one file: nothing is partial
    assert AFTER not in [c.arguments for c in done.message.tool_calls]


def test_a_review_approves_the_reference_diff_and_rejects_another(tmp_path: Path):
    population = load_population(population_file(tmp_path, review_catch_rate=1.0))
    right = "--- a/calc.py\n+++ b/calc.py\n@@ -2 +2 @@\n-    return a - b\n+    return a + b\n"
    wrong = right.replace("a + b", "a * b")
    server, _ = start_sim_server(population, REF)
    try:
        verdicts = [
            _call(server.base_url, _request("sim-large", StepType.REVIEW, f"{title}\n{diff}"))
            for diff in (right, wrong)
            for title in ["## The change (diff against the start)"]
        ]
    finally:
        server.stop()
    assert ['"approve"' in v.message.content for v in verdicts] == [True, False]


def test_cached_tokens_grow_as_a_models_prompts_share_their_start(tmp_path: Path):
    population = load_population(population_file(tmp_path))
    server, _ = start_sim_server(population, REF)
    try:
        first = _call(server.base_url, _request("sim-mid", StepType.PLAN))
        again = _call(server.base_url, _request("sim-mid", StepType.PLAN, "more context"))
        other = _call(server.base_url, _request("sim-large", StepType.PLAN))
    finally:
        server.stop()
    assert first.usage and again.usage and other.usage
    assert first.usage.cached_tokens == 0  # nothing sent to this model before
    # The second shares the system prompt, the tools and the instruction with the first.
    assert again.usage.cached_tokens > 0.8 * first.usage.prompt_tokens
    assert again.usage.cached_tokens < again.usage.prompt_tokens
    assert other.usage.cached_tokens == 0  # another model's cache is its own


def _edits(population_path: Path, run: int = 1) -> list[str]:
    """What 12 edit attempts of one task run did, on a tier that fixes half the time."""
    server, responder = start_sim_server(load_population(population_path), REF, run)
    try:
        for _ in range(12):
            _call(server.base_url, _request("sim-mid", StepType.EDIT))
    finally:
        server.stop()
    return [p.what for p in responder.played]


def test_a_seeded_run_plays_the_same_twice_and_another_seed_or_run_differs(tmp_path: Path):
    same = population_file(tmp_path, seed=3, fix_rate=0.5)
    first = _edits(same)
    assert _edits(same) == first
    assert {"right"} < set(first)  # both right and wrong edits happen at 0.5
    assert _edits(same, run=2) != first
    assert _edits(population_file(tmp_path, seed=4, fix_rate=0.5)) != first


def test_a_model_the_population_does_not_play_is_an_error_naming_it(tmp_path: Path):
    path = tmp_path / "population.toml"
    path.write_text('[tiers.mid]\nfix_rate = 1.0\n\n[models]\nsim-mid = "mid"\n')
    server, _ = start_sim_server(load_population(path), REF)
    try:
        assert _call(server.base_url, _request("sim-mid", StepType.PLAN)).message.tool_calls
        with pytest.raises(SswError, match="plays no model 'sim-other'"):
            _call(server.base_url, _request("sim-other", StepType.PLAN))
    finally:
        server.stop()


def test_a_misspelt_population_key_names_itself(tmp_path: Path):
    path = population_file(tmp_path, fix_rte=0.5)
    with pytest.raises(ConfigError, match=r"tiers\.only\.fix_rte"):
        load_population(path)


def test_the_effort_a_request_sends_picks_the_tiers_table_for_it(tmp_path: Path):
    """`reasoning_effort` low plays the tier's `efforts.low` (fewer reasoning tokens, never a
    right edit here); an effort the tier does not list plays its own fields."""
    low = {"reasoning_tokens": 5, "fix_rate": 0.0}
    population = load_population(
        population_file(tmp_path, reasoning_tokens=4000, efforts={"low": low})
    )
    server, responder = start_sim_server(population, REF)
    try:
        calls = {
            effort: _call(server.base_url, replace(_request("sim-mid", StepType.EDIT), **kw))
            for effort, kw in [
                ("low", {"reasoning_effort": "low"}),
                ("high", {"reasoning_effort": "high"}),
                ("none sent", {}),
            ]
        }
    finally:
        server.stop()
    reasoning = {e: c.usage.reasoning_tokens for e, c in calls.items() if c.usage}
    assert reasoning["low"] < 10 and reasoning["high"] > 3000 and reasoning["none sent"] > 3000
    assert [p.what for p in responder.played][1:] == ["right", "right"]
    assert responder.played[0].what in {"mutation", "stale"}


def test_an_effort_the_registry_does_not_know_is_refused_by_name(tmp_path: Path):
    path = population_file(tmp_path, efforts={"hihg": {"reasoning_tokens": 1}})
    with pytest.raises(ConfigError, match="unknown reasoning effort hihg"):
        load_population(path)
