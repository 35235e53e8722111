"""A claim proved from a bench on the simulated population speaks of ssw's routing under stated
assumptions, never of a model (ADR 0027, 0053): `ssw prove --check` holds its runs to the
scripted kind's rules. Before this change a policy on provider `sim` counted as a model's."""

from __future__ import annotations

from pathlib import Path

from tests.claims.test_evidence_scope import (
    MANY,
    ROUTE5,
    SAME_QUALITY,
    SCRIPTED,
    _check,
    _contestant,
    _paired,
    _paired_rows,
    _repo,
)

SIMULATED = [_contestant("ladder", "sim"), _contestant("big", "sim")]


def test_a_simulated_bench_cannot_say_models_fix_bugs_correctly(tmp_path: Path):
    root = _repo(tmp_path, _paired(ROUTE5, SAME_QUALITY), _paired_rows(MANY), SIMULATED)
    code, out = _check(root)
    assert code == 1, out
    scripted = "but contestant big and contestant ladder are scripted (replayed replies"
    assert f"C-201: its title speaks of models ('Claude'), {scripted}" in out
    assert f"C-201: its statement speaks of pass rates ('pass_rate'), {scripted}" in out


def test_a_claim_on_a_simulated_bench_that_says_no_model_was_called_is_accepted(tmp_path: Path):
    """The control: the same bench proves a claim within what it can say."""
    root = _repo(tmp_path, _paired("A ladder bills less", SCRIPTED), _paired_rows(MANY), SIMULATED)
    code, out = _check(root)
    assert code == 0, out
