"""A claim proved from a bench on the simulated population speaks of ssw's routing under stated
assumptions, never of a model (ADR 0027, 0053): `ssw prove --check` holds its runs to the
`simulated` kind's rules: no word of models or their quality, the word "simulated" in the
statement; its pass rates and dollars (the population's) may be shown. Before the sim, a policy
on provider `sim` counted as a model's."""

from __future__ import annotations

from pathlib import Path

from tests.claims.test_evidence_scope import (
    ROUTE5,
    SAME_QUALITY,
    SCRIPTED,
    _checked,
    _contestant,
    _paired,
)

SIMULATED = [_contestant("ladder", "sim"), _contestant("big", "sim")]
SIMULATED_STATEMENT = (
    "On a simulated bench (a stated population played every model), over {tasks} tasks the "
    "ladder passed {treatment_pass_rate} against {control_pass_rate} for {dollars_ratio} of the "
    "big worker's dollars ({ratio_ci_low}-{ratio_ci_high}, {ratio_ci_width} wide)"
)


def test_a_simulated_bench_cannot_say_models_fix_bugs_correctly(tmp_path: Path):
    out = _checked(tmp_path, _paired(ROUTE5, SAME_QUALITY), SIMULATED, 1)
    simulated = "but contestant big and contestant ladder are simulated (a population"
    assert f"C-201: its title speaks of models ('Claude'), {simulated}" in out
    assert f"C-201: its title speaks of quality ('fix'), {simulated}" in out
    assert "which are simulated, and its statement does not say simulated" in out


def test_a_claim_on_a_simulated_bench_must_say_simulated_not_scripted(tmp_path: Path):
    out = _checked(tmp_path, _paired("A ladder bills less", SCRIPTED), SIMULATED, 1)
    assert "which are simulated, and its statement does not say simulated" in out


def test_a_simulated_claim_may_show_its_pass_rates_when_it_says_simulated(tmp_path: Path):
    """The control: the same bench proves a claim within what it can say, pass rates included
    (a scripted bench could not show them)."""
    title = "On a simulated population the ladder bills less"
    _checked(tmp_path, _paired(title, SIMULATED_STATEMENT), SIMULATED, 0)
