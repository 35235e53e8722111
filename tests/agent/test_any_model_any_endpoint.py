"""Any model on any endpoint, priced from the user's cache (issue 43, ADR 0061), through the real
`ssw` against OpenAI-compatible servers on 127.0.0.1 that list made-up prices in Token Factory's
shape (`GET /v1/models?verbose=true`) and answer chat completions from a script: a model id the
preset does not list, at a URL typed on the command line, is priced from that host's own list,
kept in the user's cache for that host alone, and no installed file changes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from stepswitch.fakes.loopback import LoopbackServer, Reply
from stepswitch.registry.presets import shipped_registry_dir
from tests.harness.task import worker, write_policy, write_script

from ..test_cli import copy_registry
from .test_run_model_flag import (
    KEY,
    LIGHTNING,
    LISTING,
    TokenFactoryOnLoopback,
    one_model_replies,
    ssw,
)

KIMI = "moonshotai/Kimi-K2.5"  # a model the tokenfactory preset does not list
TASK = "fix mean"


def listing(prompt: str, completion: str) -> Reply:
    """A model list pricing KIMI at these dollars per token (as the provider quotes them)."""
    priced = {"id": KIMI, "pricing": {"prompt": prompt, "completion": completion}}
    return Reply(body={"object": "list", "data": [priced, {"id": "other/model"}]})


def shipped_files() -> dict[str, str]:
    """Every file of the registry ssw ships (the installed presets), by its hash."""
    root = shipped_registry_dir()
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def cache_files() -> list[str]:
    root = Path(os.environ["SSW_CACHE_DIR"])
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def port_of(url: str) -> str:
    return url.split(":")[2].split("/")[0]


@pytest.mark.slow
def test_a_model_the_preset_does_not_list_at_a_typed_url_is_priced_from_that_hosts_list(
    tmp_path: Path, bug_repo: Path
):
    installed = shipped_files()
    serve = TokenFactoryOnLoopback(
        write_script(tmp_path, one_model_replies() * 2), listing("0.0000012", "0.0000034")
    )
    run = ("run", bug_repo, "--model", f"tokenfactory:{KIMI}", "--task", TASK, "--json")
    with LoopbackServer(serve) as server:
        typed = ("--base-url", server.base_url)  # no --trust-endpoint: the user typed the URL
        first = ssw(*run, *typed, env_extra={"NEBIUS_API_KEY": KEY})
        asked_first = list(server.requests)
        again = ssw(*run, *typed, env_extra={"NEBIUS_API_KEY": KEY})
        asked_again = server.requests[len(asked_first) :]
    prices = ssw("prices")

    assert first.returncode == 0, first.stderr
    record = json.loads(first.stdout)
    listed = f"{server.base_url}models?verbose=true"
    assert record["outcome"] == "done"
    assert record["policy"]["workers"]["model"]["base_url"] == server.base_url
    price = record["prices"]["model"]
    assert (price["input"], price["output"], price["source"]) == (1.2, 3.4, listed)
    assert record["totals"]["cost"]["low"] > 0  # every call billed at that price
    assert [(r["provider"], r["url"]) for r in record["prices_read"]] == [("tokenfactory", listed)]
    keys = f"keys: NEBIUS_API_KEY -> http://127.0.0.1:{port_of(server.base_url)}"
    assert keys in first.stderr
    assert asked_first[0].method == "GET"  # the list before the first paid call
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in asked_first)
    # Kept for that host alone, in the user's cache; nothing ssw installed changed.
    assert cache_files() == [f"prices/tokenfactory/http_127.0.0.1_{port_of(server.base_url)}.json"]
    assert shipped_files() == installed
    # The next run reads the cache: the same price, no list asked, nothing said of a reading.
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["prices"]["model"] == price
    assert [r.path for r in asked_again if r.method == "GET"] == ["/v1/models"]  # the key's check
    assert "prices: read" not in again.stderr
    # `ssw prices` says where the price came from: the cache, with its date and the list's URL.
    row = next(line.split() for line in prices.stdout.splitlines() if KIMI in line)
    assert row[:3] == ["tokenfactory", KIMI, "1.2"]
    assert row[-2:] == ["cache", listed] and row[-3] == price["as_of"]


def test_a_price_read_from_one_host_does_not_bill_calls_to_another(tmp_path: Path, bug_repo: Path):
    """The cache holds KIMI's price from host A; a run sending KIMI to B, whose list prices
    nothing, is refused before its first paid call, naming the flag that gives a price."""
    env = {"NEBIUS_API_KEY": KEY}
    with LoopbackServer(lambda r: listing("0.000001", "0.000002")) as a:
        refreshed = ssw("prices", "refresh", "tokenfactory", "--base-url", a.base_url,
                        env_extra=env)  # fmt: skip
        refreshing = len(a.requests)
        with LoopbackServer(lambda r: Reply(body={"data": [{"id": KIMI}]})) as b:
            result = ssw("run", bug_repo, "--model", f"tokenfactory:{KIMI}", "--task", TASK,
                         "--base-url", b.base_url, env_extra=env)  # fmt: skip
            asked_b = list(b.requests)
        asked_a = a.requests[refreshing:]

    assert refreshed.returncode == 0, refreshed.stderr
    assert "kept in your price cache" in refreshed.stdout
    assert result.returncode == 2, result.stderr
    refusal = result.stderr.splitlines()[-1]
    assert f"tokenfactory {KIMI} has no known price for calls to http://127.0.0.1:" in refusal
    assert "pass --price-usd-per-mtok IN,OUT" in refusal
    assert [r.method for r in asked_b] == ["GET"]  # its list only: no paid call
    assert asked_a == []
    assert not (bug_repo / ".ssw").exists()


@pytest.mark.slow
def test_a_price_given_on_the_command_line_bills_a_server_that_lists_none(
    tmp_path: Path, bug_repo: Path
):
    serve = TokenFactoryOnLoopback(
        write_script(tmp_path, one_model_replies()), Reply(status=404, body={"error": "no"})
    )
    with LoopbackServer(serve) as server:
        result = ssw("run", bug_repo, "--model", f"tokenfactory:{KIMI}", "--task", TASK,
                     "--base-url", server.base_url, "--price-usd-per-mtok", "0.5,1.5", "--json",
                     env_extra={"NEBIUS_API_KEY": KEY})  # fmt: skip
        asked = list(server.requests)

    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    price = record["prices"]["model"]
    assert (price["input"], price["output"]) == (0.5, 1.5)
    assert "--price-usd-per-mtok" in price["source"]
    assert record["prices_read"] == []
    assert [r.path for r in asked if r.method == "GET"] == ["/v1/models"]  # the key's check only
    assert cache_files() == []


def test_prices_refresh_writes_the_users_cache_and_the_preset_only_when_asked(tmp_path: Path):
    registry = copy_registry(tmp_path)
    preset = registry / "providers" / "tokenfactory.toml"
    env = {"SSW_REGISTRY": str(registry), "NEBIUS_API_KEY": KEY}
    installed = shipped_files()
    recorded = (LISTING / "tokenfactory_models_verbose.json").read_bytes()  # the preset's models
    with LoopbackServer(lambda r: Reply(body=recorded)) as server:
        copied = preset.read_text(encoding="utf-8").replace(
            "https://api.tokenfactory.nebius.com/v1/", server.base_url
        )
        preset.write_text(copied, encoding="utf-8")
        trust = ("--trust-endpoint", "127.0.0.1")
        to_cache = ssw("prices", "refresh", "tokenfactory", *trust, env_extra=env)
        kept = preset.read_text(encoding="utf-8")
        both = ssw("prices", "refresh", "tokenfactory", "--write-preset", "--base-url",
                   server.base_url, env_extra=env)  # fmt: skip
        to_preset = ssw("prices", "refresh", "tokenfactory", "--write-preset", *trust,
                        env_extra=env)  # fmt: skip
    helped = ssw("prices", "refresh", "--help")

    assert to_cache.returncode == 0, to_cache.stderr
    assert kept == copied  # the cache, not the preset
    assert "the preset is as it was" in to_cache.stdout
    assert cache_files()
    assert both.returncode == 2 and "--write-preset" in both.stderr
    assert to_preset.returncode == 0, to_preset.stderr
    assert f"{LIGHTNING}: input unknown -> 0.11 $/1M tokens" in to_preset.stdout
    assert f'source = "{server.base_url}models?verbose=true"' in preset.read_text(encoding="utf-8")
    assert shipped_files() == installed
    assert "--write-preset" in helped.stdout and "cache" in helped.stdout


@pytest.mark.slow
def test_the_openai_compatible_preset_sends_its_own_key_to_the_url_typed(
    tmp_path: Path, bug_repo: Path
):
    """No provider's key goes to someone else's endpoint: the generic preset has a variable of
    its own, and reads prices from the plain `GET /models` where the server lists them."""
    serve = TokenFactoryOnLoopback(
        write_script(tmp_path, one_model_replies()), listing("0.0000002", "0.0000006")
    )
    keys = {"OPENAI_COMPATIBLE_API_KEY": KEY, "NEBIUS_API_KEY": "sk-test-not-for-them"}
    with LoopbackServer(serve) as server:
        result = ssw("run", bug_repo, "--model", f"openai-compatible:{KIMI}", "--task", TASK,
                     "--base-url", server.base_url, "--json", env_extra=keys)  # fmt: skip
        asked = list(server.requests)

    assert result.returncode == 0, result.stderr
    price = json.loads(result.stdout)["prices"]["model"]
    assert (price["input"], price["output"]) == (0.2, 0.6)
    assert (asked[0].method, asked[0].path) == ("GET", "/v1/models")
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in asked)


def test_a_policy_may_not_send_the_openai_compatible_key_where_it_likes(
    tmp_path: Path, bug_repo: Path
):
    """A policy file's base_url is not the user's word (ADR 0048): refused, the server unasked."""
    with LoopbackServer(lambda r: listing("0.000001", "0.000002")) as server:
        model = worker(KIMI, provider="openai-compatible", base_url=server.base_url)
        one = {"workers": {"w": model}, "rules": [{"worker": "w"}],
               "escalation": {"ladder": ["w"]}, "review": {"reviewer": "w"}}  # fmt: skip
        policy = write_policy(tmp_path, one)
        result = ssw("run", bug_repo, "--policy", policy, "--task", TASK,
                     env_extra={"OPENAI_COMPATIBLE_API_KEY": KEY})  # fmt: skip
        asked = list(server.requests)

    assert result.returncode == 2
    assert "would send OPENAI_COMPATIBLE_API_KEY to http://127.0.0.1:" in result.stderr
    assert "--trust-endpoint 127.0.0.1" in result.stderr
    assert asked == []


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--model", "openai-compatible:x"), "openai-compatible has no address of its own"),
        (("--policy", "p.toml", "--base-url", "http://127.0.0.1:9/v1/"), "--base-url goes with"),
        (("--model", "tokenfactory:x", "--price-usd-per-mtok", "1"), "--price-usd-per-mtok '1'"),
        (("--model", "tokenfactory:x", "--base-url", "ftp://h/"), "--base-url 'ftp://h/'"),
    ],
)
def test_the_flags_of_any_model_refuse_what_they_cannot_mean(
    bug_repo: Path, flags: tuple[str, ...], says: str
):
    result = ssw("run", bug_repo, *flags, "--task", TASK)

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and says in result.stderr
    assert not (bug_repo / ".ssw").exists()
