"""A provider that bills more completion tokens than the max_tokens it was sent (issue 22, ADR
0025): named in its ledger row, in `ssw ledger` and in the run's bill as the provider's
over-report, the run stopped, and in a bench every further call to that provider refused
whichever worker sends it, while other providers go on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import RunStopped
from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.ledger import CallTracker, Ledger, ledger_command, open_ledger, report
from stepswitch.wire.types import Message, Request
from tests.harness.repo import sample_repo
from tests.harness.task import (
    every_worker,
    explore,
    fix_the_bug,
    make_policy,
    run_ssw,
    use_extra_models,
)

from .conftest import chat_body, intent, tracked_call

REQUEST = Request(model="model-a", messages=(Message("user", "fix it"),), max_output_tokens=1000)
WORDS = "over-reported by {}: billed 1,200 completion tokens above max_tokens 1,000"


class Overbills:
    """A provider that bills a small prompt and `times` the max_tokens it was sent."""

    def __init__(self, times: float = 1.2) -> None:
        self.times = times
        self.got = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        self.got += 1
        usage = {
            "prompt_tokens": 10,
            "completion_tokens": int(request.json()["max_tokens"] * self.times),
        }
        return Reply(body=chat_body(usage))


def call(ledger: Ledger, base_url: str, **changes: Any) -> CallTracker:
    return tracked_call(ledger, base_url, REQUEST, intent(**changes))


def test_a_completion_past_its_cap_inside_the_reservation_is_flagged_in_its_row(
    ledger: Ledger,
) -> None:
    with LoopbackServer(Overbills()) as server:
        [row] = call(ledger, server.base_url).rows
    # 10 prompt tokens against a bound of ~1,100 leave room: the dollars stay inside.
    assert row.usd is not None and row.usd < row.reserved_usd and not row.over_reservation
    assert row.completion_tokens == 1200 and row.max_output_tokens == 1000
    assert row.overrun == WORDS.format("prov") and row.over_usd is None


def test_an_unpriced_model_that_over_reports_is_flagged_too(ledger: Ledger) -> None:
    with LoopbackServer(Overbills()) as server:
        [row] = call(ledger, server.base_url, price=None).rows
    assert row.usd is None and row.overrun == WORDS.format("prov")


def test_a_completion_at_its_cap_is_not_flagged(ledger: Ledger) -> None:
    with LoopbackServer(Overbills(times=1.0)) as server:
        [row] = call(ledger, server.base_url).rows
    assert row.completion_tokens == row.max_output_tokens and row.overrun is None


def test_ssw_ledger_names_the_provider_and_the_tokens(ledger: Ledger, ledger_path: Path) -> None:
    with LoopbackServer(Overbills()) as server:
        call(ledger, server.base_url)
    [group] = report(ledger, None, "model")
    assert group.to_json()["over_reported"] == 1
    text = ledger_command(ledger_path, None, "model", False)
    assert f"{WORDS.format('prov')} (run run-1, step 1)" in text.splitlines()
    data = json.loads(ledger_command(ledger_path, None, "model", True))
    [liar] = data["over_reported"]
    assert (liar["provider"], liar["completion_tokens"], liar["max_output_tokens"]) == (
        "prov",
        1200,
        1000,
    )
    assert liar["text"] == WORDS.format("prov") and data["total"]["over_reported"] == 1


def test_in_a_bench_every_worker_of_that_provider_is_refused_after_one_over_report(
    ledger_path: Path,
) -> None:
    # Two workers of one bench, each with its own connection to the bench's one ledger file.
    liar, honest = Overbills(), Overbills(times=0.5)
    with (
        open_ledger(ledger_path) as first,
        open_ledger(ledger_path) as second,
        LoopbackServer(liar) as lying,
        LoopbackServer(honest) as fine,
    ):
        call(first, lying.base_url, run_id="a", bench_id="b1")
        with pytest.raises(RunStopped) as info:
            call(second, lying.base_url, run_id="b", bench_id="b1")  # same provider, other worker
        assert liar.got == 1  # the second call never left the machine
        assert info.value.outcome == "limit"
        assert str(info.value) == (
            f"refused a call before sending it: {WORDS.format('prov')} (run a, step 1, model-a), "
            "so no further call goes to prov in bench b1 (its usage cannot be trusted to hold a "
            "budget)"
        )
        # Another provider in the same bench goes on; so does this provider in another bench.
        assert call(second, fine.base_url, run_id="c", bench_id="b1", provider="other").rows
        assert call(second, lying.base_url, run_id="d", bench_id="b2").rows
        assert liar.got == 2 and honest.got == 1
        rows = second.rows()
    assert [r.run_id for r in rows] == ["a", "c", "d"]  # the refused call left no row


def test_outside_a_bench_the_runs_own_next_call_is_refused(ledger: Ledger) -> None:
    with LoopbackServer(Overbills()) as server:
        call(ledger, server.base_url, bench_id=None)
        with pytest.raises(RunStopped, match="no further call goes to prov in this run"):
            call(ledger, server.base_url, bench_id=None, step=2)
        assert call(ledger, server.base_url, bench_id=None, run_id="next").rows  # a new run may


# --- a full run: the bill says it and the run stops ---


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


def test_a_run_stops_at_an_over_report_inside_its_reservation_and_the_bill_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_extra_models(monkeypatch, tmp_path)  # scripted-priced: $10 a million each way
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    policy = make_policy(workers=every_worker("scripted-priced"))
    # 4,000 completion tokens against the 2,048 sent; 100 prompt tokens: $0.041, inside the
    # ~$0.056 reserved, so only the cap shows the lie.
    replies = [{**r, **_usage(100, 4_000)} for r in [*explore(), *fix_the_bug()]]
    run = run_ssw(tmp_path, repo, replies, policy=policy, budget_usd=0.5)

    with open_ledger(repo / ".ssw" / "ledger.sqlite") as ledger:
        [row] = ledger.rows(run.record.run_id)  # no further call was made
    assert not row.over_reservation
    words = "over-reported by scripted: billed 4,000 completion tokens above max_tokens 2,048"
    assert row.overrun == words
    assert (run.record.outcome, run.record.exit_code) == ("limit", 1)
    assert run.record.reason == (
        f"{words} (scripted-priced, step 1, plan; inside its ${row.reserved_usd:.4f} "
        "reservation); stopped before any further call: usage past the cap sent cannot be "
        "trusted to hold a budget"
    )
    assert f"limit: {run.record.reason}" in run.lines  # the bill's first line
    assert run.saved.reason == run.record.reason


def test_an_over_report_past_the_reservation_names_the_provider_and_the_dollars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_extra_models(monkeypatch, tmp_path)
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    policy = make_policy(workers=every_worker("scripted-priced"))
    replies = [{**r, **_usage(2_000, 8_192)} for r in [*explore(), *fix_the_bug()]]
    run = run_ssw(tmp_path, repo, replies, policy=policy, budget_usd=0.5)

    assert run.record.outcome == "limit" and len(run.steps) == 1
    assert run.record.reason.startswith(
        "over-reported by scripted: billed 8,192 completion tokens above max_tokens 2,048; "
        "scripted scripted-priced billed $0.1019 for step 1 (plan), $"
    )
    assert run.record.reason.endswith(
        "8,192 completion tokens billed for a cap of 2,048 (max_output_tokens); stopped before "
        "any further call, so no budget is passed by more than this call's overrun"
    )
