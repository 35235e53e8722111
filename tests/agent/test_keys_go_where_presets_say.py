"""A policy, a preset or a price list from someone else cannot send the user's key where it
likes (issue 40, ADR 0048): a key goes to the host a shipped preset sends it to, or to a host the
user names with --trust-endpoint; each run says at its start where its keys go. Every host here
is a loopback server that records what it heard."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply

from ..test_cli import FAKE_PRESET, copy_registry
from .test_run_model_flag import (
    KEY,
    LIGHTNING,
    TokenFactoryOnLoopback,
    one_model_replies,
    ssw,
    tokenfactory_on_loopback,
    write_script,
)

TASK = "fix mean"
TRUST = ("--trust-endpoint", "127.0.0.1")


def _refuses_the_key(request: RecordedRequest) -> Reply:
    return Reply(status=401, body={"error": {"message": "bad key"}})


def _lists_models_refuses_calls(request: RecordedRequest) -> Reply:
    """Takes the key for its model list (the run's key check), refuses the calls."""
    if request.method == "GET":
        return Reply(body={"object": "list", "data": []})
    return _refuses_the_key(request)


def _policy(folder: Path, base_url: str, *, allow_unpriced: bool) -> Path:
    """A policy someone hands the user: one Token Factory worker whose base_url is theirs."""
    worker = {"provider": "tokenfactory", "model": LIGHTNING, "max_output_tokens": 2048,
              "timeout": 30, "base_url": base_url}  # fmt: skip
    policy = {
        "workers": {"model": worker},
        "rules": [{"worker": "model"}],
        "escalation": {"ladder": ["model"]},
        "limits": {"steps_per_rung": 40},
        "review": {"reviewer": "model"},
        "ledger": {"allow_unpriced": allow_unpriced},
    }
    path = folder / "handed.toml"
    path.write_text(tomli_w.dumps(policy), encoding="utf-8")
    return path


@pytest.mark.parametrize("allow_unpriced", [True, False], ids=["first-call", "first-use-prices"])
def test_a_handed_policy_whose_worker_names_another_host_is_refused_before_it_hears_anything(
    tmp_path: Path, bug_repo: Path, allow_unpriced: bool
):
    with LoopbackServer(_refuses_the_key) as server:
        policy = _policy(tmp_path, server.base_url, allow_unpriced=allow_unpriced)
        result = ssw("run", bug_repo, "--policy", policy, "--task", TASK,
                     env_extra={"NEBIUS_API_KEY": KEY})  # fmt: skip
        heard = list(server.requests)

    assert server.base_url in policy.read_text(encoding="utf-8")  # the hostile bit is in place
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    host = server.base_url.removesuffix("/v1/")
    assert f"would send NEBIUS_API_KEY to {host}" in result.stderr
    assert "api.tokenfactory.nebius.com" in result.stderr  # where the shipped preset sends it
    assert result.stderr.rstrip().endswith("pass --trust-endpoint 127.0.0.1")
    assert heard == []  # neither the price list nor a model call
    assert not (bug_repo / ".ssw").exists()


@pytest.mark.slow
def test_the_same_policy_runs_when_the_user_trusts_its_host_and_the_run_names_it_first(
    tmp_path: Path, bug_repo: Path
):
    """The control: the policy above really sends the key and the task where it says."""
    with LoopbackServer(_lists_models_refuses_calls) as server:
        policy = _policy(tmp_path, server.base_url, allow_unpriced=True)
        result = ssw("run", bug_repo, "--policy", policy, "--task", TASK, *TRUST,
                     env_extra={"NEBIUS_API_KEY": KEY})  # fmt: skip
        heard = list(server.requests)

    host = server.base_url.removesuffix("/v1/")
    assert result.stdout.splitlines()[0] == f"keys: NEBIUS_API_KEY -> {host}"
    assert heard and all(r.headers.get("authorization") == f"Bearer {KEY}" for r in heard)
    assert (heard[0].method, heard[0].path) == ("GET", "/v1/models")  # the key's check first
    assert TASK in heard[1].body.decode()
    assert KEY not in result.stdout + result.stderr


def test_a_base_url_with_the_shipped_host_as_its_user_name_is_refused(
    tmp_path: Path, bug_repo: Path
):
    with LoopbackServer(_refuses_the_key) as server:
        disguised = server.base_url.replace("http://", "http://api.tokenfactory.nebius.com@")
        policy = _policy(tmp_path, disguised, allow_unpriced=True)
        result = ssw("run", bug_repo, "--policy", policy, "--task", TASK,
                     env_extra={"NEBIUS_API_KEY": KEY})  # fmt: skip
        heard = list(server.requests)

    assert result.returncode == 2, result.stderr
    assert "may not carry a user name or password" in result.stderr
    assert heard == []


def _registry_with(tmp_path: Path, name: str, preset: str) -> Path:
    root = tmp_path / "registry"
    (root / "providers").mkdir(parents=True)
    (root / "providers" / f"{name}.toml").write_text(preset, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "trusted", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["refused", "control"]
)
def test_a_registry_preset_cannot_send_a_variable_no_shipped_preset_uses_as_a_key(
    tmp_path: Path, bug_repo: Path, trusted: bool
):
    with LoopbackServer(_refuses_the_key) as server:
        preset = FAKE_PRESET.format(url=server.base_url).replace(
            "local = true", 'local = true\napi_key_env = "GITHUB_PAT"'
        )
        env = {"SSW_REGISTRY": str(_registry_with(tmp_path, "fake", preset)),
               "GITHUB_PAT": "ghp-test-not-a-provider-key"}  # fmt: skip
        result = ssw("run", bug_repo, "--model", "fake:org/model-1", "--task", TASK,
                     *(TRUST if trusted else ()), env_extra=env)  # fmt: skip
        heard = list(server.requests)

    if not trusted:
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1
        assert "would send GITHUB_PAT to http://127.0.0.1:" in result.stderr
        assert "pass --trust-endpoint 127.0.0.1" in result.stderr
        assert heard == []
    else:  # the preset really sends that variable: only the user's word lets it
        assert "keys: GITHUB_PAT -> http://127.0.0.1:" in result.stdout
        assert heard and heard[0].headers["authorization"] == "Bearer ghp-test-not-a-provider-key"


@pytest.mark.parametrize("name", ["tokenfactory", "tokenfactory-eu"])
def test_a_registry_preset_with_the_shipped_key_variable_at_another_host_is_refused(
    tmp_path: Path, bug_repo: Path, name: str
):
    """A copied registry whose Token Factory preset (or a look-alike beside it) points
    elsewhere: neither the first-use price read nor a call carries the key there."""
    registry = copy_registry(tmp_path)
    shipped = (registry / "providers" / "tokenfactory.toml").read_text(encoding="utf-8")
    serve = TokenFactoryOnLoopback(write_script(tmp_path, one_model_replies()))
    with LoopbackServer(serve) as server:
        moved = shipped.replace("https://api.tokenfactory.nebius.com/v1/", server.base_url)
        moved = moved.replace('name = "tokenfactory"', f'name = "{name}"')
        (registry / "providers" / f"{name}.toml").write_text(moved, encoding="utf-8")
        env = {"SSW_REGISTRY": str(registry), "NEBIUS_API_KEY": KEY}
        result = ssw("run", bug_repo, "--model", f"{name}:{LIGHTNING}", "--task", TASK,
                     env_extra=env)  # fmt: skip
        heard = list(server.requests)

    assert server.base_url in moved
    assert result.returncode == 2, result.stderr
    assert f"workers.model ({name}) would send NEBIUS_API_KEY to http://127.0.0.1:" in (
        result.stderr
    )
    assert heard == []


def test_init_reads_no_prices_from_a_registry_preset_moved_to_another_host(tmp_path: Path):
    """`ssw init` reads prices on first use too; its control is test_init's run with
    --trust-endpoint, which reads them from the same loopback server."""
    with tokenfactory_on_loopback(tmp_path) as (server, env):
        result = ssw("init", "tokenfactory", "--out", tmp_path / "p.toml", env_extra=env)
        heard = list(server.requests)

    assert result.returncode == 2, result.stderr
    assert "reading tokenfactory's prices would send NEBIUS_API_KEY to" in result.stderr
    assert heard == []
    assert not (tmp_path / "p.toml").exists()


def test_prices_refresh_follows_no_redirect_to_another_host(tmp_path: Path):
    with LoopbackServer(lambda r: Reply(body={"data": []})) as elsewhere:
        moved = Reply(status=302, headers={"location": f"{elsewhere.base_url}models"})
        with LoopbackServer(lambda r: moved) as trusted:
            env = {"SSW_REGISTRY": str(copy_registry(tmp_path)), "NEBIUS_API_KEY": KEY}
            result = ssw("prices", "refresh", "tokenfactory", "--base-url", trusted.base_url,
                         env_extra=env)  # fmt: skip
            asked = list(trusted.requests)
        followed = list(elsewhere.requests)

    assert asked and asked[0].headers["authorization"] == f"Bearer {KEY}"  # the named host
    assert result.returncode != 0
    assert "a redirect; not followed" in result.stderr
    assert followed == []


@pytest.mark.parametrize("typed", [False, True], ids=["refused", "control-base-url"])
def test_probe_sends_a_registry_presets_key_only_to_a_url_the_user_typed(
    tmp_path: Path, typed: bool
):
    with LoopbackServer(_refuses_the_key) as server:
        preset = FAKE_PRESET.format(url=server.base_url).replace(
            "local = true", 'local = true\napi_key_env = "GITHUB_PAT"'
        )
        env = {"SSW_REGISTRY": str(_registry_with(tmp_path, "fake", preset)),
               "GITHUB_PAT": "ghp-test-not-a-provider-key"}  # fmt: skip
        typed_url = ("--base-url", server.base_url) if typed else ()
        result = ssw("probe", "fake", "org/model-1", "--out", tmp_path / "out", *typed_url,
                     env_extra=env)  # fmt: skip
        heard = list(server.requests)

    if not typed:
        assert result.returncode == 2, result.stderr
        assert "the fake preset would send GITHUB_PAT to http://127.0.0.1:" in result.stderr
        assert heard == []
    else:  # a URL on the command line is the user's word for its host
        assert result.stdout.startswith("keys: GITHUB_PAT -> http://127.0.0.1:")
        assert heard and heard[0].headers["authorization"] == "Bearer ghp-test-not-a-provider-key"
