"""The key's check before a run makes anything (agent/key_check.py, ADR 0065), per wire format,
against servers on 127.0.0.1: one `GET models` per host and key variable, with the headers the
calls carry; the statuses that refuse a key refuse the run, others say nothing, and no answer is
said without stopping it."""

from __future__ import annotations

from typing import Any

import pytest

from stepswitch.agent.key_check import KeyChecker, key_checks
from stepswitch.agent.workers import worker_models
from stepswitch.errors import AuthError
from stepswitch.fakes.loopback import LoopbackServer, Reply
from stepswitch.policy.model import Policy
from stepswitch.registry.presets import load_shipped_registry
from stepswitch.registry.trust import Trust
from tests.harness.task import worker

KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test-1", "GEMINI_API_KEY": "gm-test-2",
        "NEBIUS_API_KEY": "sk-test-3"}  # fmt: skip
LOOPBACK = Trust.named(["127.0.0.1"])


def _policy(**workers: dict[str, Any]) -> Policy:
    ladder = {"ladder": list(workers)}
    return Policy.model_validate(
        {"workers": workers, "escalation": ladder, "ledger": {"allow_unpriced": True}}
    )


def _checker(policy: Policy, registry: dict[str, Any] | None = None) -> KeyChecker:
    registry = registry or load_shipped_registry()
    models = worker_models(policy, registry, KEYS)
    return KeyChecker(key_checks(policy, registry, models, KEYS, LOOPBACK))


def _at(server: LoopbackServer, provider: str, model: str) -> dict[str, Any]:
    return worker(model, provider=provider, base_url=server.base_url)


def test_a_messages_provider_is_asked_its_model_list_with_the_calls_headers_and_401_refuses():
    with LoopbackServer(lambda r: Reply(status=401, body={"type": "error"})) as server:
        checker = _checker(_policy(w=_at(server, "anthropic", "claude-haiku-4-5")))
        with pytest.raises(AuthError) as refused:
            checker.settle()
        [asked] = server.requests

    assert (asked.method, asked.path) == ("GET", "/v1/models")
    assert asked.headers["x-api-key"] == KEYS["ANTHROPIC_API_KEY"]
    assert "anthropic-version" in asked.headers and "authorization" not in asked.headers
    said = str(refused.value)
    assert said.startswith("anthropic refused the key in ANTHROPIC_API_KEY (HTTP 401")
    assert KEYS["ANTHROPIC_API_KEY"] not in said
    assert refused.value.exit_code == 2


def test_gemini_refuses_a_key_it_does_not_know_with_400_and_that_refuses_the_run():
    invalid = {"error": {"code": 400, "status": "INVALID_ARGUMENT"}}
    with LoopbackServer(lambda r: Reply(status=400, body=invalid)) as server:
        checker = _checker(_policy(w=_at(server, "gemini", "gemini-3.5-flash")))
        with pytest.raises(AuthError, match=r"^gemini refused the key in GEMINI_API_KEY"):
            checker.settle()
        [asked] = server.requests
    assert asked.headers["x-goog-api-key"] == KEYS["GEMINI_API_KEY"]


def test_one_check_per_host_and_key_and_a_status_that_refuses_nothing_says_nothing():
    model = "nvidia/Nemotron-3_5-Lightning"
    with LoopbackServer(lambda r: Reply(status=404)) as server:
        workers = {name: _at(server, "tokenfactory", model) for name in ("small", "large")}
        checker = _checker(_policy(**workers, scripted=worker("scripted-mid")))
        assert checker.settle() == []
        asked = list(server.requests)
    assert [(r.method, r.path) for r in asked] == [("GET", "/v1/models")]
    assert asked[0].headers["authorization"] == f"Bearer {KEYS['NEBIUS_API_KEY']}"


def test_a_preset_that_says_its_list_cannot_check_a_key_is_not_asked():
    registry = dict(load_shipped_registry())
    registry["tokenfactory"] = registry["tokenfactory"].model_copy(update={"key_check": False})
    with LoopbackServer(lambda r: Reply(status=401)) as server:
        policy = _policy(w=_at(server, "tokenfactory", "nvidia/Nemotron-3_5-Lightning"))
        assert _checker(policy, registry).checks == []
        assert list(server.requests) == []
