"""`ssw init PROVIDER` as a user runs it: a starter policy that `ssw policy check` accepts for
every preset with models, its ladder ordered by list price, no file overwritten unasked, and
one line for a provider the registry does not know (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.registry.presets import load_registry
from tests.harness.cli import run_ssw_cli

from .test_cli import copy_registry

FIXTURES = Path(__file__).parent / "fixtures" / "prices"
PRESETS_WITH_MODELS = sorted(name for name, spec in load_registry().items() if spec.models)


def ssw(*args: str | Path, cwd: Path, env_extra: dict[str, str] | None = None):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(env_extra or {})
    return run_ssw_cli(args, env=env, cwd=cwd, timeout=60)


def workers_of(path: Path) -> dict[str, str]:
    policy = tomllib.loads(path.read_text(encoding="utf-8"))
    return {name: w["model"] for name, w in policy["workers"].items()}


@pytest.mark.parametrize("provider", PRESETS_WITH_MODELS)
def test_init_writes_a_policy_that_policy_check_accepts(provider: str, tmp_path: Path):
    out = tmp_path / f"{provider}.toml"
    result = ssw("init", provider, "--out", out, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stdout
    assert "level  step" in result.stdout  # the `ssw policy check` table
    assert (
        result.stdout.rstrip()
        .splitlines()[-1]
        .endswith(f'ssw run . --policy {out} --task "what to do"')
    )
    checked = ssw("policy", "check", out, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "no worker for step type" not in checked.stdout
    assert out.read_text(encoding="utf-8").startswith("# A starter policy for")


def test_init_gives_the_cheapest_model_the_reading_and_the_dearest_the_planning(tmp_path: Path):
    out = tmp_path / "policy.toml"
    assert ssw("init", "anthropic", "--out", out, cwd=tmp_path).returncode == 0

    assert workers_of(out) == {
        "cheap": "claude-haiku-4-5",
        "mid": "claude-sonnet-5",
        "large": "claude-opus-5",
    }
    table = ssw("policy", "check", out, cwd=tmp_path).stdout
    assert "no warnings" in table
    assert any(line.split()[:3] == ["0", "read", "cheap"] for line in table.splitlines())
    assert any(line.split()[:3] == ["1", "edit", "large"] for line in table.splitlines())


def test_init_with_no_price_known_follows_the_presets_tiers_and_says_so(tmp_path: Path):
    out = tmp_path / "policy.toml"
    result = ssw("init", "tokenfactory", "--out", out, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert workers_of(out) == {
        "cheap": "nvidia/Nemotron-3_5-Lightning",
        "mid": "nvidia/nemotron-3-super-120b-a12b",
        "large": "nvidia/Nemotron-3-Ultra-550b-a55b",
        "second": "openai/gpt-oss-120b",
    }
    assert "by the tier the preset names for each" in out.read_text(encoding="utf-8")
    assert "has no known price" in result.stdout  # the check's warnings, shown
    assert "next: export NEBIUS_API_KEY=<your Nebius Token Factory key>, then" in result.stdout


def test_init_of_a_hosted_provider_without_its_key_says_to_export_it(tmp_path: Path):
    result = ssw("init", "openai", "--out", tmp_path / "p.toml", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "next: export OPENAI_API_KEY=<your OpenAI key>, then ssw run ." in result.stdout


def test_init_refuses_to_overwrite_a_file_unless_forced(tmp_path: Path):
    out = tmp_path / "policy.toml"
    out.write_text("# mine\n", encoding="utf-8")

    refused = ssw("init", "gemini", "--out", out, cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"ssw: {out} exists; pass --force to overwrite it, or --out another file\n"
    )
    assert out.read_text(encoding="utf-8") == "# mine\n"

    forced = ssw("init", "gemini", "--out", out, "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "gemini-3.1-pro-preview" in out.read_text(encoding="utf-8")


def test_init_of_an_unknown_provider_is_one_line_listing_the_known_ones(tmp_path: Path):
    result = ssw("init", "nosuch", cwd=tmp_path)

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "unknown provider 'nosuch'; known providers: anthropic, gemini," in result.stderr
    assert not (tmp_path / ".ssw").exists()


def _git(repo: Path, *args: str) -> str:
    identity = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@localhost"}
    identity |= {"GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@localhost"}
    return subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **identity}, check=True, capture_output=True,
        text=True,
    ).stdout  # fmt: skip


def test_the_default_policy_file_does_not_make_ssw_run_call_the_checkout_dirty(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("print('hi')\n", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the user's code")

    written = ssw("init", "anthropic", cwd=repo)
    assert written.returncode == 0, written.stderr
    assert (repo / ".ssw" / "policy.toml").is_file()
    assert "ssw run . --policy .ssw/policy.toml" in written.stdout

    run = ssw("run", ".", "--policy", ".ssw/policy.toml", "--task", "say hello", cwd=repo)
    assert run.returncode == 2
    assert "uncommitted changes" not in run.stderr
    assert "ANTHROPIC_API_KEY is not set" in run.stderr  # the next thing to do, not the file


def test_init_with_the_key_set_reads_the_prices_and_ranks_by_them(tmp_path: Path):
    """Token Factory ships with no prices: with NEBIUS_API_KEY set, init reads them from the
    provider's model list (a loopback server serving recorded, made-up prices) first."""
    listing = (FIXTURES / "tokenfactory_models_verbose.json").read_bytes()
    seen: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply(body=listing)

    registry = copy_registry(tmp_path)
    preset = registry / "providers" / "tokenfactory.toml"
    with LoopbackServer(answer) as server:
        text = preset.read_text(encoding="utf-8")
        preset.write_text(text.replace("https://api.tokenfactory.nebius.com/v1/", server.base_url))
        env = {"SSW_REGISTRY": str(registry), "NEBIUS_API_KEY": "sk-test-init-4242"}
        out = tmp_path / "policy.toml"
        trust = ("--trust-endpoint", "127.0.0.1")  # the key goes to the loopback server
        result = ssw("init", "tokenfactory", "--out", out, *trust, cwd=tmp_path, env_extra=env)

    assert result.returncode == 0, result.stderr
    assert [(r.method, r.path) for r in seen] == [("GET", "/v1/models?verbose=true")]
    assert "prices: read prices of" in result.stdout
    assert "no warnings" in result.stdout
    assert "sk-test-init-4242" not in result.stdout + out.read_text(encoding="utf-8")
    # Weighted four parts input to one part output, Lightning is cheapest and Ultra dearest.
    # The same ladder as without a key: the preset's tiers decide, the prices only show.
    assert workers_of(out) == {
        "cheap": "nvidia/Nemotron-3_5-Lightning",
        "mid": "nvidia/nemotron-3-super-120b-a12b",
        "large": "nvidia/Nemotron-3-Ultra-550b-a55b",
        "second": "openai/gpt-oss-120b",  # another family than the reviewer's, on no rung
    }
    prices = json.loads(ssw("models", "--provider", "tokenfactory", "--json", cwd=tmp_path,
                            env_extra=env).stdout)  # fmt: skip
    assert all(row["price"] != "unknown" for row in prices), prices
