"""`ssw bench run` with a policy someone handed the user (ADR 0048): its worker's own base_url
gets no key unless the user trusts that host, and the bench says where its keys go."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import tomli_w

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from tests.harness.cli import run_ssw_cli

from . import write_task

KEY = "sk-test-bench-keys-4242"


def _refuses_the_key(request: RecordedRequest) -> Reply:
    return Reply(status=401, body={"error": {"message": "bad key"}})


def _handed_policy(folder: Path, base_url: str) -> None:
    worker = {"provider": "tokenfactory", "model": "nvidia/Nemotron-3_5-Lightning",
              "max_output_tokens": 2048, "timeout": 30, "base_url": base_url}  # fmt: skip
    policy = {
        "workers": {"w": worker},
        "rules": [{"worker": "w"}],
        "escalation": {"ladder": ["w"]},
        "review": {"reviewer": "w"},
        "ledger": {"allow_unpriced": True},
    }
    (folder / "handed.toml").write_text(tomli_w.dumps(policy), encoding="utf-8")


def _bench(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"PYTHONDONTWRITEBYTECODE": "1", "NEBIUS_API_KEY": KEY})
    args = ["bench", "run", "--suite", "suite", "--contestant", "handed.toml",
            "--out", "runs/b", *extra]  # fmt: skip
    return run_ssw_cli(args, cwd=tmp_path, timeout=600, env=env)


@pytest.mark.parametrize(
    "trusted", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["refused", "control"]
)
def test_a_handed_bench_policy_sends_no_key_to_its_own_host_unless_the_user_trusts_it(
    tmp_path: Path, trusted: bool
):
    write_task(tmp_path, "t1")
    with LoopbackServer(_refuses_the_key) as server:
        _handed_policy(tmp_path, server.base_url)
        result = _bench(tmp_path, *(("--trust-endpoint", "127.0.0.1") if trusted else ()))
        heard = list(server.requests)

    host = server.base_url.removesuffix("/v1/")
    if not trusted:
        assert result.returncode == 2, result.stderr
        assert result.stderr == (
            f"ssw: workers.w (tokenfactory) would send NEBIUS_API_KEY to {host}, which the "
            "shipped presets send only to api.tokenfactory.nebius.com; if you trust 127.0.0.1, "
            "pass --trust-endpoint 127.0.0.1\n"
        )
        assert heard == []
        assert not (tmp_path / "runs").exists()
    else:  # the policy really sends the key there: the bench names the host before it does
        assert f"keys: NEBIUS_API_KEY -> {host}" in result.stderr
        assert heard and heard[0].headers["authorization"] == f"Bearer {KEY}"
        assert KEY not in result.stdout + result.stderr
