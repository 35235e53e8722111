"""Input bounds before any call (issue 22, ADR 0025): a prompt whose bound (a token a byte of the
body, plus the allowance) passes the model's context window is refused before it leaves, with
nothing billed; an output cap above the registry's limit is refused when the policy loads; a
task file larger than any model could be sent is refused by its size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepswitch.errors import ConfigError, RunStopped
from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.ledger import PROMPT_ALLOWANCE_TOKENS, CallTracker, Ledger, open_ledger
from stepswitch.policy.model import load_policy
from stepswitch.wire.formats.chat_completions import ChatCompletionsCodec
from stepswitch.wire.types import Message, Request
from tests.harness.repo import sample_repo
from tests.harness.task import (
    WINDOWED_TOKENS,
    every_worker,
    explore,
    make_policy,
    run_ssw,
    write_policy,
)

from .conftest import chat_body, intent, tracked_call

WINDOW = WINDOWED_TOKENS  # tokens: a small model, so a few kB of prompt passes it


class BillsWhatItGets:
    """A provider that bills a prompt token per body byte, whatever its window."""

    def __init__(self) -> None:
        self.got: list[int] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        self.got.append(len(request.body))
        usage = {"prompt_tokens": len(request.body), "completion_tokens": 10}
        return Reply(body=chat_body(usage))


def _send(ledger: Ledger, base_url: str, text: str, window: int) -> CallTracker:
    request = Request(model="model-a", messages=(Message("user", text),), max_output_tokens=100)
    return tracked_call(
        ledger, base_url, request, intent(context_window=window, max_output_tokens=100)
    )


def _body_bytes(text: str) -> int:
    request = Request(model="model-a", messages=(Message("user", text),), max_output_tokens=100)
    return len(json.dumps(ChatCompletionsCodec().encode(request)).encode())


def test_a_prompt_past_the_context_window_is_refused_before_it_leaves_naming_the_sizes(
    ledger: Ledger,
) -> None:
    text = "x" * 20_000  # 20 kB against a 2,000-token window
    provider = BillsWhatItGets()
    with LoopbackServer(provider) as server, pytest.raises(RunStopped) as info:
        _send(ledger, server.base_url, text, WINDOW)
    body = _body_bytes(text)
    assert provider.got == []  # nothing left the machine
    assert ledger.rows() == []  # nothing reserved, nothing billed
    assert info.value.outcome == "error"
    assert str(info.value) == (
        f"refused a call before sending it: prov model-a (edit step 1) has a context window of "
        f"{WINDOW:,} tokens, and this prompt could be up to {body + PROMPT_ALLOWANCE_TOKENS:,} "
        f"({body:,} request bytes + 1,024): shorten the task or what the step reads, or route "
        "the step to a model with a larger window"
    )


def test_a_prompt_whose_bound_is_the_window_exactly_goes_out_and_its_bill_fits(
    ledger: Ledger,
) -> None:
    pad = WINDOW - PROMPT_ALLOWANCE_TOKENS - _body_bytes("")
    text = "x" * pad
    assert _body_bytes(text) + PROMPT_ALLOWANCE_TOKENS == WINDOW
    provider = BillsWhatItGets()
    with LoopbackServer(provider) as server:
        [row] = _send(ledger, server.base_url, text, WINDOW).rows
    assert provider.got == [row.prompt_bytes] and row.est_prompt_tokens == WINDOW
    assert row.usd is not None and row.usd <= row.reserved_usd  # billing what it got fits
    with LoopbackServer(provider) as server, pytest.raises(RunStopped):
        _send(ledger, server.base_url, text + "x", WINDOW)  # one byte more does not go out
    assert len(provider.got) == 1


def test_a_run_whose_prompt_passes_the_window_ends_error_with_the_reason_and_no_bill(
    tmp_path: Path, extra_models: Path
) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    policy = make_policy(workers=every_worker("scripted-windowed"))
    task = "Fix calc.ops.mean. " + "Background: the mean must divide by the count. " * 200
    run = run_ssw(tmp_path, repo, explore(), policy=policy, task=task, budget_usd=1.0)

    assert (run.record.outcome, run.record.exit_code) == ("error", 1)
    reason = run.record.reason
    assert reason.startswith(
        "refused a call before sending it: scripted scripted-windowed (plan step 1) has a "
        f"context window of {WINDOW:,} tokens, and this prompt could be up to "
    )
    assert "request bytes + 1,024)" in reason and run.saved.reason == reason
    assert f"error: {reason}" in run.lines  # the bill's first line
    [step] = run.steps
    assert step.attempts == 0 and step.error == reason
    assert run.record.cost.high == 0.0
    with open_ledger(repo / ".ssw" / "ledger.sqlite") as ledger:
        assert ledger.rows() == []


# --- the output cap against the registry, when the policy loads ---

LADDER = """
[workers.w]
provider = "anthropic"
model = "claude-opus-5"
max_output_tokens = {cap}
timeout = 30

[[rules]]
worker = "w"

[escalation]
ladder = ["w"]
"""


def test_an_output_cap_above_the_models_limit_is_refused_when_the_policy_loads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "huge.toml"
    path.write_text(LADDER.format(cap=10**12), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_policy(path)
    assert str(info.value) == (
        f"{path}: workers.w.max_output_tokens: is 1,000,000,000,000, above the 128,000 output "
        "tokens anthropic claude-opus-5 allows (registry/providers/anthropic.toml) "
        "(fix: set it to at most 128000)"
    )
    assert info.value.exit_code == 2 and "\n" not in str(info.value)
    path.write_text(LADDER.format(cap=128_000), encoding="utf-8")
    assert load_policy(path).workers["w"].max_output_tokens == 128_000  # the limit itself fits


def test_ssw_run_refuses_such_a_policy_before_making_anything(
    tmp_path: Path, extra_models: Path
) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    policy = make_policy(workers=every_worker("scripted-windowed", max_output_tokens=5000))
    with pytest.raises(ConfigError) as info:
        run_ssw(tmp_path, repo, explore(), policy=policy)
    assert str(info.value).startswith(
        f"{write_policy(tmp_path, policy)}: workers.small.max_output_tokens: is 5,000, above the "
        "4,096 output tokens scripted scripted-windowed allows"
    )
    assert not (repo / ".ssw").exists()


# --- --task-file ---


def test_a_task_file_over_one_mib_is_refused_by_its_size_and_one_at_it_is_read(
    tmp_path: Path,
) -> None:
    from stepswitch.agent.task_input import MAX_TASK_BYTES, read_task_file

    big = tmp_path / "task.md"
    big.write_bytes(b"a" * (MAX_TASK_BYTES + 1))
    with pytest.raises(ConfigError) as info:
        read_task_file(big)
    assert str(info.value) == (
        f"{big}: (file): is 1,048,577 bytes, more than a task file may be (1,048,576 bytes, 1 MiB) "
        "(fix: put what to do in the file and leave the material in the repository for the "
        "agent to read)"
    )
    big.write_bytes(b"a" * MAX_TASK_BYTES)
    assert len(read_task_file(big)) == MAX_TASK_BYTES
    with pytest.raises(ConfigError, match="no such task file"):
        read_task_file(tmp_path / "missing.md")  # the other problems are read_text_input's
