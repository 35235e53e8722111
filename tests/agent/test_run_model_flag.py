"""`ssw run PATH --model PROVIDER:MODEL_ID`: one model on every step with no policy file, as a
real process; and a model the preset has no price for gets its price from the provider's model
list on first use when the key is set, said in run.json (issue 25) and kept in the user's price
cache, not the preset (ADR 0061)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.fakes.scripted import ScriptedResponder, load_script
from stepswitch.records.run import RunRecord
from stepswitch.site.sources import contestant_of
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git
from tests.harness.task import done, explore, fix_the_bug, verdict, write_script

from ..test_cli import copy_registry

LISTING = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
LIGHTNING = "nvidia/Nemotron-3_5-Lightning"
KEY = "sk-test-first-use-4242"


def ssw(*args: str | Path, env_extra: dict[str, str] | None = None):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(env_extra or {})
    return run_ssw_cli(args, env=env, timeout=120)


def one_model_replies() -> list[dict]:
    """Scripted replies for a run with one worker: no second opinion on the review."""
    return [*explore(), *fix_the_bug(), verdict("approve"), done("Fix mean\n\nDivide by n.")]


def test_model_and_policy_together_are_refused_in_one_line(tmp_path: Path, bug_repo: Path):
    policy = tmp_path / "p.toml"
    policy.write_text("", encoding="utf-8")
    result = ssw("run", bug_repo, "--policy", policy, "--model", "scripted:scripted-mid",
                 "--task", "fix mean")  # fmt: skip

    assert result.returncode == 2
    assert result.stderr == "ssw: give --policy FILE or --model PROVIDER:MODEL_ID, not both\n"
    assert not (bug_repo / ".ssw").exists()


def test_run_with_neither_model_nor_policy_names_both_and_ssw_init(bug_repo: Path):
    result = ssw("run", bug_repo, "--task", "fix mean")

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "--policy FILE or --model PROVIDER:MODEL_ID" in result.stderr
    assert "ssw init PROVIDER" in result.stderr


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("nosuch:some-model", "unknown provider 'nosuch'; known: anthropic, gemini,"),
        ("claude-opus-5", "is not PROVIDER:MODEL_ID"),
    ],
)
def test_a_malformed_model_or_unknown_provider_is_one_line_and_exit_2(
    bug_repo: Path, value: str, says: str
):
    result = ssw("run", bug_repo, "--model", value, "--task", "fix mean")

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"--model {value!r}" in result.stderr and says in result.stderr
    assert not (bug_repo / ".ssw").exists()


@pytest.mark.slow
def test_one_scripted_model_fixes_the_bug_with_no_policy_file(tmp_path: Path, bug_repo: Path):
    script = write_script(tmp_path, one_model_replies())
    result = ssw("run", bug_repo, "--model", "scripted:scripted-mid", "--script", script,
                 "--task", "fix mean", "--json")  # fmt: skip

    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert (record["outcome"], record["gates_verdict"]) == ("done", "passed")
    assert record["policy_path"] == "--model scripted:scripted-mid"
    assert list(record["policy"]["workers"]) == ["model"]
    assert record["policy"]["workers"]["model"]["model"] == "scripted-mid"
    assert record["policy"]["escalation"]["ladder"] == ["model"]
    assert record["scripted"] is True
    assert contestant_of(RunRecord.model_validate(record)) == "scripted:scripted-mid"  # the pages
    assert "calc/ops.py" in git(bug_repo, "diff", "--name-only", "main", record["branch"])


def test_an_unpriced_model_without_its_key_names_the_one_thing_to_do(bug_repo: Path):
    result = ssw("run", bug_repo, "--model", f"tokenfactory:{LIGHTNING}", "--task", "fix mean")

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"tokenfactory {LIGHTNING} has no known price" in result.stderr
    assert "export NEBIUS_API_KEY=<your Nebius Token Factory key>" in result.stderr
    assert not (bug_repo / ".ssw").exists()


class TokenFactoryOnLoopback:
    """Token Factory's two endpoints a run uses, on 127.0.0.1: its model list with recorded,
    made-up prices, and chat completions answered by SCRIPTED replies."""

    def __init__(self, script: Path, listing: Reply | None = None) -> None:
        recorded = (LISTING / "tokenfactory_models_verbose.json").read_bytes()
        self.listing = listing or Reply(body=recorded)
        self.chat = ScriptedResponder(load_script(script))

    def __call__(self, request: RecordedRequest) -> Reply:
        if request.method == "GET":
            return self.listing
        return self.chat(request)


@contextmanager
def tokenfactory_on_loopback(tmp_path: Path) -> Iterator[tuple[LoopbackServer, dict[str, str]]]:
    """Token Factory's shipped preset moved to a loopback server that lists its models and
    answers one_model_replies(): the server, and the environment (registry, key) for ssw."""
    registry = copy_registry(tmp_path)
    preset = registry / "providers" / "tokenfactory.toml"
    serve = TokenFactoryOnLoopback(write_script(tmp_path, one_model_replies()))
    with LoopbackServer(serve) as server:
        text = preset.read_text(encoding="utf-8")
        preset.write_text(text.replace("https://api.tokenfactory.nebius.com/v1/", server.base_url))
        yield server, {"SSW_REGISTRY": str(registry), "NEBIUS_API_KEY": KEY}


@pytest.mark.slow
def test_a_run_reads_unknown_prices_from_the_model_list_and_says_so_in_run_json(
    tmp_path: Path, bug_repo: Path
):
    with tokenfactory_on_loopback(tmp_path) as (server, env):
        preset = Path(env["SSW_REGISTRY"]) / "providers" / "tokenfactory.toml"
        moved = preset.read_text(encoding="utf-8")
        result = ssw("run", bug_repo, "--model", f"tokenfactory:{LIGHTNING}",
                     "--task", "fix mean", "--json", "--trust-endpoint", "127.0.0.1",
                     env_extra=env)  # fmt: skip
        requests = list(server.requests)

    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["outcome"] == "done"
    listed = f"{server.base_url}models?verbose=true"
    assert [(r["provider"], r["url"]) for r in record["prices_read"]] == [("tokenfactory", listed)]
    assert record["prices_read"][0]["at"] <= record["started_at"]
    price = record["prices"]["model"]
    assert (price["input"], price["output"], price["source"]) == (0.11, 0.33, listed)
    assert record["totals"]["cost"]["low"] > 0  # the ledger priced every call
    said = [line for line in result.stderr.splitlines() if line.startswith("prices: read")]
    assert len(said) == 1 and LIGHTNING in said[0] and listed in said[0]
    keys = f"keys: NEBIUS_API_KEY -> {server.base_url.removesuffix('/v1/')}"
    assert result.stderr.index(keys) < result.stderr.index(said[0])  # named before it is sent
    assert requests[0].method == "GET"  # the list first, before any call
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in requests)
    assert KEY not in result.stdout + result.stderr
    # Kept in the user's price cache for that host, as `ssw prices refresh` keeps them; the
    # preset is as it was (ADR 0061).
    assert "https://api.tokenfactory.nebius.com/v1/" not in moved and server.base_url in moved
    assert preset.read_text(encoding="utf-8") == moved
    assert "kept in your price cache" in said[0]
