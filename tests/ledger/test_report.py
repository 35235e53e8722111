"""`ssw ledger`: calls, tokens, cached share, dollars and share per group; ranges where usage
was lost, 'unpriced' where no price is known, never a single guessed number."""

from __future__ import annotations

import json

import pytest

from stepswitch.errors import UsageError
from stepswitch.ledger import (
    Ledger,
    LedgerError,
    ledger_command,
    open_ledger,
    render_report,
    report,
)
from stepswitch.wire.types import Attempt, Usage

from .conftest import WORST, intent, ok


def fill(ledger: Ledger) -> None:
    a = intent(model="model-a", step_type="edit", worker="coder", tags={"team": "core"})
    usage = Usage(prompt_tokens=1000, cached_tokens=500, completion_tokens=100)
    ledger.settle(ledger.reserve(a, 1, 3000), ok(usage))  # 500*2 + 500*0.2 + 100*10 = $0.0021
    ledger.settle(ledger.reserve(a, 2, 3000), ok(usage))
    b = intent(model="model-b", step_type="plan", worker="planner", tags={"team": "core", "f": "x"})
    ledger.settle(ledger.reserve(b, 1, 3000), ok(None))  # lost usage: $0 to WORST
    ledger.settle(ledger.reserve(b, 2, 3000), Attempt(2, 429, "HTTP 429", 0.1, None))
    c = intent(model="model-c", price=None, worker="local", tags={}, task_id="task-2")
    ledger.settle(ledger.reserve(c, 1, 300), ok(Usage(prompt_tokens=10, completion_tokens=5)))
    other = intent(run_id="run-2", model="model-a")
    ledger.settle(ledger.reserve(other, 1, 3000), ok(usage))


def test_by_model_with_ranges_shares_and_unpriced(ledger):
    fill(ledger)
    groups = {g.key: g for g in report(ledger, "run-1", "model")}
    assert list(groups) == ["prov model-b", "prov model-a", "prov model-c"]  # by high dollars
    a, b, c = groups["prov model-a"], groups["prov model-b"], groups["prov model-c"]
    assert (a.calls, a.prompt_tokens, a.cached_tokens, a.completion_tokens) == (2, 2000, 1000, 200)
    assert a.cached_share == 0.5
    assert a.low_usd == a.high_usd == pytest.approx(0.0042)
    assert a.dollars_text() == "$0.0042"
    assert (b.calls, b.errors, b.lost) == (2, 1, 1)
    assert (b.low_usd, b.high_usd) == (0.0, pytest.approx(WORST))
    assert b.dollars_text() == f"$0.0000-${WORST:.4f}"
    assert c.unpriced_calls == 1 and c.dollars_text() == "unpriced"
    # a is certain; b is 0..WORST, so a's share is 0.0042/(0.0042+WORST) .. 100%.
    assert a.share_low == pytest.approx(0.0042 / (0.0042 + WORST))
    assert a.share_high == pytest.approx(1.0)
    assert (b.share_low, b.share_high) == (0.0, pytest.approx(WORST / (WORST + 0.0042)))


def test_rendered_report_shows_ranges_and_unpriced(ledger):
    fill(ledger)
    text = render_report(report(ledger, "run-1", "model"), by="model")
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["model", "calls", "errors"]
    assert f"$0.0000-${WORST:.4f}" in text and "unpriced" in text and "$0.0042" in text
    share = round(100 * 0.0042 / (0.0042 + WORST))
    assert f"{share}%-100%" in text and "n/a" in text  # an unpriced group has no known share


@pytest.mark.parametrize(
    ("by", "keys"),
    [
        ("step_type", {"edit", "plan"}),
        ("worker", {"coder", "planner", "local"}),
        ("task", {"task-1", "task-2"}),
        ("tag", {"team=core", "f=x", "(untagged)"}),
    ],
)
def test_other_groupings(ledger, by, keys):
    fill(ledger)
    assert {g.key for g in report(ledger, "run-1", by)} == keys


def test_by_tag_counts_a_call_under_each_of_its_tags(ledger):
    fill(ledger)
    groups = {g.key: g for g in report(ledger, "run-1", "tag")}
    assert groups["team=core"].calls == 4 and groups["f=x"].calls == 2
    assert groups["(untagged)"].calls == 1


def test_all_runs_when_no_run_is_given(ledger):
    fill(ledger)
    assert sum(g.calls for g in report(ledger, None, "model")) == 6


def test_ledger_command_text_and_json(ledger, ledger_path):
    fill(ledger)
    text = ledger_command(ledger_path, "run-1", "model", False)
    assert "total" in text and "ranges:" in text
    data = json.loads(ledger_command(ledger_path, "run-1", "worker", True))
    assert data["by"] == "worker" and data["run"] == "run-1"
    assert {g["key"] for g in data["groups"]} == {"coder", "planner", "local"}
    total = data["total"]
    assert total["calls"] == 5 and total["unpriced_calls"] == 1 and not total["exact"]
    assert total["low_usd"] == pytest.approx(0.0042)
    assert total["high_usd"] == pytest.approx(0.0042 + WORST)


def test_ledger_command_reports_orphans_without_settling_them(ledger, ledger_path):
    ledger.reserve(intent(), 1, 3000)
    ledger.close()
    import sqlite3

    raw = sqlite3.connect(ledger_path)
    raw.execute("UPDATE calls SET boot_id = 'older'")
    raw.commit()
    raw.close()
    text = ledger_command(ledger_path, None, "model", False)
    assert text.splitlines()[0] == (
        "1 call(s) left open by a process that ended mid-call: counted up to their "
        f"reservations (${WORST:.4f} in all) until the next `ssw run` or bench settles them as "
        "bounds (this report writes nothing)"
    )
    with open_ledger(ledger_path) as writer:  # settling is the writers' job
        assert [r.status for r in writer.recovered] == ["bound"]


def test_an_unknown_run_is_a_one_line_error(ledger, ledger_path):
    with pytest.raises(LedgerError, match="holds no call of run 'nope'"):
        ledger_command(ledger_path, "nope", "model", False)


def test_an_unknown_grouping_is_a_usage_error(ledger, ledger_path):
    with pytest.raises(UsageError, match="unknown --by"):
        ledger_command(ledger_path, None, "colour", False)


def test_calls_that_cost_more_than_their_reservation_are_flagged(ledger, ledger_path):
    reservation = ledger.reserve(intent(), 1, 30)  # 15 prompt tokens estimated
    ledger.settle(reservation, ok(Usage(prompt_tokens=100_000, completion_tokens=10)))
    [group] = report(ledger, None, "model")
    assert group.over_reserved == 1
    assert "1 call(s) cost more than their reservation" in ledger_command(
        ledger_path, None, "model", False
    )
