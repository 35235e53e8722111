"""A provider whose prompt count cannot be true (issue 45, ADR 0067): above the model's context
window, or below what the request's bytes can encode. In every wire format, over real HTTP on
127.0.0.1: named in the row, billed as the ADR says, the run stopped, and in a bench every
further call to that provider refused, as a completion over-report is (ADR 0025)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import RunStopped
from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.ledger import CallTracker, Ledger, ledger_command, open_ledger
from stepswitch.ledger.overreport import MAX_BYTES_PER_TOKEN, stop_reason
from stepswitch.ledger.pricing import cost_usd
from stepswitch.wire.types import Message, Request, Usage
from tests.harness.repo import sample_repo
from tests.harness.task import (
    WORKERS,
    explore,
    fix_the_bug,
    make_policy,
    run_ssw,
    use_extra_models,
    worker,
)

from .conftest import PRICE, intent, tracked_call

FIXTURES = Path(__file__).parent.parent / "fixtures"
# Each format's recorded plain body, and where its usage goes in that format's own names.
BODIES = {
    "chat-completions": "chat_completions/tool_calls_parallel.json",
    "responses": "responses/two_tool_calls.json",
    "messages": "messages/two_tool_uses.json",
    "generate-content": "generate_content/two_function_calls.json",
}
# About 6 KB of request: at most 32 bytes a token, it holds at least ~190 tokens.
REQUEST = Request(
    model="m", messages=(Message("user", "fix the bug in stats.py\n" * 250),), max_output_tokens=500
)
WINDOW = 200_000


def _usage(wire_format: str, prompt: int, completion: int) -> dict[str, Any]:
    if wire_format == "chat-completions":
        return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion}}
    if wire_format == "generate-content":
        return {"usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion}}
    return {"usage": {"input_tokens": prompt, "output_tokens": completion}}


class Reports:
    """A provider answering its format's recorded body with the usage it is told to report."""

    def __init__(self, wire_format: str, prompt: int, completion: int = 40) -> None:
        body = json.loads((FIXTURES / BODIES[wire_format]).read_text())
        body.pop("_source", None)
        self.body = {**body, **_usage(wire_format, prompt, completion)}
        self.got: list[RecordedRequest] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        self.got.append(request)
        return Reply(body=self.body)


def call(ledger: Ledger, wire_format: str, base_url: str, **changes: Any) -> CallTracker:
    sent = intent(context_window=WINDOW, max_output_tokens=500, **changes)
    return tracked_call(ledger, base_url, REQUEST, sent, wire_format)


@pytest.mark.parametrize("wire_format", sorted(BODIES))
def test_a_prompt_count_below_what_the_bytes_hold_is_billed_from_that_floor_and_named(
    ledger: Ledger, ledger_path: Path, wire_format: str
) -> None:
    liar = Reports(wire_format, prompt=1)
    with LoopbackServer(liar) as server:
        [row] = call(ledger, wire_format, server.base_url).rows
    sent = len(liar.got[0].body)
    floor = sent // MAX_BYTES_PER_TOKEN
    assert row.prompt_bytes == sent and row.prompt_tokens == 1  # what it said, kept
    assert row.misreport == (
        f"under-reported by prov: 1 prompt tokens for {sent:,} request bytes, which hold at "
        f"least {floor:,} (at most {MAX_BYTES_PER_TOKEN} bytes a token); billed from {floor:,} "
        "prompt tokens up to the request's bound"
    )
    # Billed at the floor, a range up to the request's bound; never at the 1 token it said.
    assert row.usd == pytest.approx(cost_usd(PRICE, Usage(floor, completion_tokens=40)))
    assert row.low_usd == row.usd
    assert row.high_usd == pytest.approx(
        cost_usd(PRICE, Usage(row.est_prompt_tokens, completion_tokens=40))
    )
    assert row.dollars_text().count("$") == 2  # shown as a range
    reason = stop_reason([row])
    assert reason is not None and reason.startswith(row.misreport)
    assert reason.endswith("a prompt count that cannot be true cannot be trusted to hold a budget")
    assert row.misreport in ledger_command(ledger_path, None, "model", False).splitlines()[-1]


@pytest.mark.parametrize("wire_format", sorted(BODIES))
def test_a_prompt_count_above_the_window_is_an_over_report(
    ledger: Ledger, wire_format: str
) -> None:
    with LoopbackServer(Reports(wire_format, prompt=10_000_000)) as server:
        [row] = call(ledger, wire_format, server.base_url).rows
    assert row.misreport == (
        "over-reported by prov: billed 10,000,000 prompt tokens above the model's context "
        f"window of {WINDOW:,}"
    )
    assert row.over_reservation  # billed as reported: the ADR 0013 overrun, said with it
    reason = stop_reason([row])
    assert reason is not None and reason.startswith(f"{row.misreport}; prov model-a billed $")


@pytest.mark.parametrize("wire_format", sorted(BODIES))
def test_a_believable_count_is_not_flagged(ledger: Ledger, wire_format: str) -> None:
    # Control: the same request, a count a real tokenizer gives (~4 bytes a token).
    with LoopbackServer(Reports(wire_format, prompt=len("fix the bug") * 60)) as server:
        [row] = call(ledger, wire_format, server.base_url).rows
    assert row.misreport is None and row.high_usd == row.usd


def test_in_a_bench_every_worker_of_an_under_reporting_provider_stops(ledger_path: Path) -> None:
    liar = Reports("chat-completions", prompt=1)
    with (
        open_ledger(ledger_path) as first,
        open_ledger(ledger_path) as second,
        LoopbackServer(liar) as server,
    ):
        call(first, "chat-completions", server.base_url, run_id="a", bench_id="b1")
        with pytest.raises(RunStopped, match="no further call goes to prov in bench b1") as info:
            call(second, "chat-completions", server.base_url, run_id="b", bench_id="b1")
        assert "under-reported by prov" in str(info.value)
        assert len(liar.got) == 1  # the second worker's call never left the machine
        assert info.value.outcome == "limit"


def test_a_run_whose_provider_under_reports_stops_and_its_bill_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_extra_models(monkeypatch, tmp_path)  # scripted-priced: $10 a million each way
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    policy = make_policy(workers={name: worker("scripted-priced") for name in WORKERS})
    usage = {"usage": {"prompt_tokens": 1, "completion_tokens": 50}}
    replies = [{**r, **usage} for r in [*explore(), *fix_the_bug()]]
    run = run_ssw(tmp_path, repo, replies, policy=policy, budget_usd=0.5)

    with open_ledger(repo / ".ssw" / "ledger.sqlite") as ledger:
        [row] = ledger.rows(run.record.run_id)  # no further call was made
    assert row.misreport is not None and row.misreport.startswith("under-reported by scripted")
    assert (run.record.outcome, run.record.exit_code) == ("limit", 1)
    assert run.record.reason.startswith(row.misreport)
    assert f"limit: {run.record.reason}" in run.lines
    # The step's record carries the range and the words.
    [step] = run.steps
    assert step.cost is not None and step.cost.low < step.cost.high
    assert row.misreport in step.note
