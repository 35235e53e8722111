"""Where a key may go (registry/trust.py, ADR 0048), attacked as a hostile policy or preset
would write its URL: the host is read as httpx will connect, and anything but the shipped
preset's own origin for that key, or a host the user named, is refused in one line."""

from __future__ import annotations

import time

import pytest

from stepswitch.agent.providers import HttpProviders
from stepswitch.errors import SswError, UsageError
from stepswitch.fakes.loopback import LoopbackServer, Reply
from stepswitch.policy.model import WorkerConfig
from stepswitch.registry.presets import load_shipped_registry
from stepswitch.registry.trust import (
    Destination,
    Trust,
    check_destination,
    check_destinations,
)
from stepswitch.wire.types import Message, Request

NEBIUS = "NEBIUS_API_KEY"


def _send(url: str, key_env: str | None = NEBIUS, trust: Trust | None = None) -> str:
    return str(check_destination(Destination("workers.w (x)", key_env, url), trust or Trust()))


@pytest.mark.parametrize(
    "url",
    [
        "https://api.tokenfactory.nebius.com/v1/",
        "https://API.TokenFactory.Nebius.com:443/v1/",  # case and the default port: one origin
    ],
)
def test_the_shipped_presets_own_host_receives_its_key(url: str):
    assert _send(url) == "api.tokenfactory.nebius.com"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://api.tokenfactory.nebius.com@evil.example/v1/", "user name or password"),
        ("https://api.tokenfactory.nebius.com\\@evil.example/v1/", "user name or password"),
        ("https://API.TOKENFACTORY.nebius.com.evil.example/v1/", "nebius.com.evil.example"),
        ("https://api.tokenfactory.nebius.com./v1/", "to api.tokenfactory.nebius.com., "),
        ("https://\u0430pi.tokenfactory.nebius.com/v1/", "to xn--pi-6kc.tokenfactory.nebius.com"),
        ("http://api.tokenfactory.nebius.com/v1/", "to http://api.tokenfactory.nebius.com,"),
        ("https://api.tokenfactory.nebius.com:8443/v1/", ":8443"),
        ("http://127.0.0.1:8000/v1/", "to http://127.0.0.1:8000"),  # a key to loopback too
    ],
)
def test_a_look_alike_of_the_shipped_host_is_refused_naming_what_it_really_is(url: str, says: str):
    with pytest.raises(UsageError) as refused:
        _send(url)
    assert says in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_key_is_not_sent_to_another_shipped_providers_host():
    with pytest.raises(UsageError, match=r"would send OPENAI_API_KEY to api\.tokenfactory"):
        _send("https://api.tokenfactory.nebius.com/v1/", "OPENAI_API_KEY")


def test_a_host_the_user_names_receives_the_key_on_any_port_and_scheme():
    trust = Trust.named(["GPU-Box", "127.0.0.1"])
    assert _send("http://gpu-box:8000/v1/", "GITHUB_PAT", trust) == "http://gpu-box:8000"
    assert _send("http://127.0.0.1:8000/v1/", NEBIUS, trust) == "http://127.0.0.1:8000"
    with pytest.raises(UsageError, match=r"pass --trust-endpoint gpu-box\.evil"):
        _send("http://gpu-box.evil:8000/v1/", NEBIUS, trust)  # the named host only


@pytest.mark.parametrize("url", ["http://localhost:11434/v1/", "http://[::1]:8000/v1/"])
def test_a_request_with_no_key_may_go_to_loopback(url: str):
    assert _send(url, None).startswith("http://")


def test_a_request_with_no_key_to_a_remote_host_needs_trust_too_it_carries_the_task():
    with pytest.raises(UsageError, match=r"would send the task and the code to http://gpu-box"):
        _send("http://gpu-box:8000/v1/", None)
    assert _send("http://gpu-box:8000/v1/", None, Trust.named(["gpu-box"]))


@pytest.mark.parametrize(
    "value", ["https://gpu-box/", "gpu-box:8000", "[::1]:8000", "me@gpu-box", ""]
)
def test_trust_endpoint_takes_a_host_alone(value: str):
    with pytest.raises(UsageError, match="give a host name alone"):
        Trust.named([value])


def test_every_shipped_preset_passes_and_the_start_line_names_each_keys_host():
    destinations = [
        Destination(f"workers.{s.name}", s.api_key_env, s.base_url)
        for s in load_shipped_registry().values()
    ]
    line = check_destinations(destinations, Trust())
    assert line is not None
    assert "NEBIUS_API_KEY -> api.tokenfactory.nebius.com" in line
    assert "OPENAI_API_KEY -> api.openai.com" in line
    assert "127.0.0.1" not in line  # keyless local servers receive no key


def test_the_provider_factory_refuses_an_untrusted_worker_before_any_request():
    """The second check: whatever path reaches the HTTP providers, they ask first."""
    with LoopbackServer(lambda r: Reply(status=401)) as server:
        model = "nvidia/Nemotron-3_5-Lightning"
        worker = WorkerConfig(provider="tokenfactory", model=model, max_output_tokens=64,
                              timeout=5, base_url=server.base_url)  # fmt: skip
        env = {NEBIUS: "sk-test-trust"}
        providers = HttpProviders(load_shipped_registry(), env=env)
        trusted = HttpProviders(load_shipped_registry(), env=env, trust=Trust.named(["127.0.0.1"]))
        try:
            with pytest.raises(UsageError, match=r"workers\.w \(tokenfactory\) would send"):
                providers("w", worker)
            assert trusted("w", worker) is not None  # the control: the user's word opens it
        finally:
            providers.close()
            trusted.close()
        assert list(server.requests) == []


def test_a_model_call_redirected_elsewhere_is_not_followed_with_the_key():
    """A guard (it held before issue 40 too): a trusted host cannot pass the key on."""
    with LoopbackServer(lambda r: Reply(body={})) as elsewhere:
        moved = Reply(status=307, headers={"location": f"{elsewhere.base_url}chat/completions"})
        with LoopbackServer(lambda r: moved) as trusted:
            model = "nvidia/Nemotron-3_5-Lightning"
            worker = WorkerConfig(provider="tokenfactory", model=model, max_output_tokens=64,
                                  timeout=5, base_url=trusted.base_url)  # fmt: skip
            providers = HttpProviders(load_shipped_registry(), env={NEBIUS: "sk-test-trust"},
                                      trust=Trust.named(["127.0.0.1"]))  # fmt: skip
            try:
                with pytest.raises(SswError):
                    providers("w", worker).complete(
                        Request(model, (Message("user", "hi"),)), deadline=time.monotonic() + 30
                    )
            finally:
                providers.close()
            asked = list(trusted.requests)
        followed = list(elsewhere.requests)

    assert asked and asked[0].headers["authorization"] == "Bearer sk-test-trust"
    assert followed == []
