"""Routing policies: the shipped files, the loader's errors, the Router, and `ssw policy check`."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from stepswitch.errors import ConfigError
from stepswitch.policy.check import check_policy, render_policy_check
from stepswitch.policy.model import Policy, load_policy, validate_policy
from stepswitch.policy.router import Router
from stepswitch.registry.presets import ModelSpec, Price, ProviderSpec, clear_cache, load_registry
from stepswitch.steps import StepType

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "bench" / "policies"
SHIPPED = sorted(POLICIES.glob("*.toml"))

LIGHTNING = "nvidia/Nemotron-3_5-Lightning"
SUPER = "nvidia/nemotron-3-super-120b-a12b"
ULTRA = "nvidia/Nemotron-3-Ultra-550b-a55b"

_PRICE = Price(input=1.0, output=4.0, source="https://acme.test/pricing", as_of=date(2026, 11, 29))

# A small registry built from the real spec classes: two families, one model with efforts.
ACME = ProviderSpec(
    name="acme",
    display_name="Acme",
    base_url="https://api.acme.test/v1/",
    api_key_env="ACME_API_KEY",
    wire_formats=("chat-completions",),
    models={
        "big": ModelSpec(family="alpha", reasoning_efforts=("low", "high"), price=_PRICE),
        "small": ModelSpec(family="alpha", price=_PRICE),
        "other": ModelSpec(family="beta", price=_PRICE),
        "mystery": ModelSpec(family="beta", price="unknown"),
    },
)
REGISTRY = {"acme": ACME}

# A valid two-rung policy on ACME; tests append to it or replace parts.
BASE = """\
[workers.small]
provider = "acme"
model = "small"
max_output_tokens = 1000
timeout = 60

[workers.big]
provider = "acme"
model = "big"
effort = "high"
max_output_tokens = 4000
timeout = 300

[[rules]]
when = { step_type = ["edit", "run"], escalations = 0 }
worker = "small"

[[rules]]
when = { escalations = [0] }
worker = "big"

[escalation]
ladder = ["small", "big"]
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _load(tmp_path: Path, text: str) -> Policy:
    return load_policy(_write(tmp_path, text))


def _error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    return info.value


@pytest.fixture(scope="module")
def ladder() -> Router:
    return Router(load_policy(POLICIES / "tokenfactory-ladder.toml"))


@pytest.fixture(scope="module")
def shipped_registry() -> dict[str, ProviderSpec]:
    clear_cache()
    return load_registry(ROOT / "registry")


# --- shipped policies ---


def test_the_four_policies_ship() -> None:
    assert {p.stem for p in SHIPPED} >= {
        "tokenfactory-ladder",
        "tokenfactory-ultra",
        "tokenfactory-lightning-first",
        "llamacpp-local",
    }


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_policy_loads_and_checks_with_only_price_warnings(
    path: Path, shipped_registry: dict[str, ProviderSpec]
) -> None:
    check = check_policy(load_policy(path), shipped_registry)
    assert all("no known price" in w for w in check.warnings), check.warnings


def test_local_policy_is_free_and_has_no_budget(shipped_registry: dict[str, ProviderSpec]) -> None:
    policy = load_policy(POLICIES / "llamacpp-local.toml")
    check = check_policy(policy, shipped_registry)
    assert policy.limits.budget_usd is None
    assert check.warnings == ()
    assert {(r.worker.input_price, r.worker.output_price) for r in check.rows if r.worker} == {
        ("0", "0")
    }


# --- routing in the ladder policy ---


@pytest.mark.parametrize(
    ("step_type", "model"),
    [
        (StepType.NAVIGATE, LIGHTNING),
        (StepType.READ, LIGHTNING),
        (StepType.SUMMARIZE, LIGHTNING),
        (StepType.EDIT, SUPER),
        (StepType.RUN, SUPER),
        (StepType.TRIAGE, SUPER),
        (StepType.PLAN, ULTRA),
        (StepType.REVIEW, ULTRA),
    ],
)
def test_ladder_routes_each_step_type_at_level_0(
    ladder: Router, step_type: StepType, model: str
) -> None:
    assert ladder.pick(step_type, 0).worker.model == model


def test_ultra_takes_over_edits_after_one_escalation(ladder: Router) -> None:
    for step_type in (StepType.EDIT, StepType.RUN, StepType.TRIAGE):
        choice = ladder.pick(step_type, 1)
        assert (choice.name, choice.worker.model) == ("ultra", ULTRA)


def test_cheap_steps_stay_on_lightning_after_escalation(ladder: Router) -> None:
    assert ladder.pick(StepType.READ, 1).name == "lightning"


def test_levels_beyond_the_ladder_stay_on_the_top_rung(ladder: Router) -> None:
    assert ladder.pick(StepType.EDIT, 7).name == "ultra"


def test_ladder_escalates_after_two_gate_failures(ladder: Router) -> None:
    assert ladder.policy.escalation.after_gate_failures == 2
    assert ladder.policy.escalation.ladder == ("super", "ultra")


def test_lightning_first_walks_the_whole_ladder() -> None:
    router = Router(load_policy(POLICIES / "tokenfactory-lightning-first.toml"))
    picks = [router.pick(StepType.EDIT, level).name for level in range(3)]
    assert picks == ["lightning", "super", "ultra"]
    assert {router.pick(s, 0).name for s in StepType} == {"lightning"}


def test_ultra_policy_always_picks_ultra() -> None:
    router = Router(load_policy(POLICIES / "tokenfactory-ultra.toml"))
    assert {router.pick(s, 0).worker.model for s in StepType} == {ULTRA}


def test_negative_escalations_is_a_bug() -> None:
    with pytest.raises(ValueError):
        Router(load_policy(POLICIES / "tokenfactory-ultra.toml")).pick(StepType.EDIT, -1)


# --- rule matching ---


def test_first_match_wins(tmp_path: Path) -> None:
    router = Router(_load(tmp_path, BASE))
    assert router.pick(StepType.EDIT, 0).name == "small"  # rule 0 before the catch-all rule 1
    assert router.pick(StepType.PLAN, 0).name == "big"


def test_no_matching_rule_above_level_0_goes_to_the_ladder(tmp_path: Path) -> None:
    assert Router(_load(tmp_path, BASE)).pick(StepType.EDIT, 1).name == "big"


def test_escalations_take_an_int_or_a_list(tmp_path: Path) -> None:
    policy = _load(tmp_path, BASE)
    assert policy.rules[0].when.escalations == (0,)
    assert policy.rules[1].when.escalations == (0,)


def test_a_rule_without_when_matches_everything(tmp_path: Path) -> None:
    text = BASE.replace('when = { escalations = [0] }\nworker = "big"', 'worker = "big"')
    router = Router(_load(tmp_path, text))
    assert router.pick(StepType.READ, 1).name == "big"


# --- load errors ---


def test_unknown_worker_key_is_named(tmp_path: Path) -> None:
    error = _error(tmp_path, BASE.replace("timeout = 60", "timeout = 60\ntemprature = 0.2"))
    assert error.key == "workers.small.temprature"
    assert "unknown key" in error.message
    assert "temperature" in error.message  # the fix lists the keys that are allowed


def test_unknown_section_and_when_key_are_named(tmp_path: Path) -> None:
    assert _error(tmp_path, BASE + "\n[budget]\nusd = 1\n").key == "budget"
    text = BASE.replace("escalations = [0] }", "escalation = [0] }")
    error = _error(tmp_path, text)
    assert error.key == "rules[1].when.escalation"
    assert "escalations" in error.message


def test_rule_naming_an_unconfigured_worker_is_an_error(tmp_path: Path) -> None:
    error = _error(tmp_path, BASE.replace('worker = "big"', 'worker = "huge"'))
    assert error.key == "rules[1].worker"
    assert "'huge'" in error.message


def test_ladder_and_review_naming_unconfigured_workers_are_errors(tmp_path: Path) -> None:
    text = BASE.replace('ladder = ["small", "big"]', 'ladder = ["small", "giant"]')
    assert _error(tmp_path, text).key == "escalation.ladder[1]"
    text = BASE + '\n[review]\nreviewer = "big"\nsecond_opinion = "nobody"\n'
    assert _error(tmp_path, text).key == "review.second_opinion"


def test_a_step_type_with_no_worker_is_an_error_naming_it(tmp_path: Path) -> None:
    # Only edit and run are routed at level 0; plan is the first step type left without a worker.
    text = BASE.replace('when = { escalations = [0] }\nworker = "big"', 'worker = "big"')
    text = text.replace('worker = "big"', 'when = { escalations = 1 }\nworker = "big"')
    error = _error(tmp_path, text)
    assert error.key == "rules"
    assert "'plan'" in error.message
    assert "level 0" in error.message


def test_bad_effort_name_is_an_error(tmp_path: Path) -> None:
    error = _error(tmp_path, BASE.replace('effort = "high"', 'effort = "maximum"'))
    assert error.key == "workers.big.effort"
    assert "xhigh" in error.message


def test_bad_step_type_is_an_error(tmp_path: Path) -> None:
    error = _error(tmp_path, BASE.replace('"edit", "run"', '"edit", "deploy"'))
    assert error.key == "rules[0].when.step_type[1]"


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("max_output_tokens = 1000", "max_output_tokens = 0", "workers.small.max_output_tokens"),
        ("max_output_tokens = 1000", "max_output_tokens = true", "workers.small.max_output_tokens"),
        ("timeout = 60", "timeout = -1", "workers.small.timeout"),
        ("timeout = 60", "timeout = true", "workers.small.timeout"),
        ("timeout = 60", 'timeout = "60"', "workers.small.timeout"),
        ("timeout = 60", "timeout = nan", "workers.small.timeout"),
        ("timeout = 60", "timeout = 60\ntemperature = false", "workers.small.temperature"),
        ("timeout = 60", 'timeout = 60\nbase_url = "localhost:8080"', "workers.small.base_url"),
        ("[escalation]", "[limits]\nwall_time_s = true\n\n[escalation]", "limits.wall_time_s"),
        ("[escalation]", "[limits]\nbudget_usd = true\n\n[escalation]", "limits.budget_usd"),
        ("timeout = 60", "timeout = 60\ntemperature = 2.5", "workers.small.temperature"),
        ("escalations = [0]", "escalations = [-1]", "rules[1].when.escalations[0]"),
        ('ladder = ["small", "big"]', "ladder = []", "escalation.ladder"),
    ],
)
def test_bad_values_are_errors_naming_the_key(tmp_path: Path, old: str, new: str, key: str) -> None:
    assert _error(tmp_path, BASE.replace(old, new)).key == key


def test_timeout_true_is_refused_rather_than_read_as_one_second(tmp_path: Path) -> None:
    error = _error(tmp_path, BASE.replace("timeout = 60", "timeout = true"))
    assert error.problem == "Input should be a valid number"
    assert str(error).endswith("(fix: write a plain number, not true)")
    assert _load(tmp_path, BASE.replace("timeout = 60", "timeout = 1.5")).workers[
        "small"
    ].timeout == pytest.approx(1.5)


def test_missing_required_key_is_named(tmp_path: Path) -> None:
    error = _error(tmp_path, BASE.replace("timeout = 300\n", ""))
    assert error.key == "workers.big.timeout"


def test_bad_ledger_and_limits_are_errors(tmp_path: Path) -> None:
    error = _error(tmp_path, BASE + '\n[ledger]\non_lost_usage = "ignore"\n')
    assert error.key == "ledger.on_lost_usage"
    error = _error(tmp_path, BASE + "\n[limits]\nmax_steps = 10\nsteps_per_rung = 11\n")
    assert error.key == "limits.steps_per_rung"
    assert _error(tmp_path, BASE + "\n[limits]\nbudget_usd = 0\n").key == "limits.budget_usd"


def test_syntax_error_and_missing_file(tmp_path: Path) -> None:
    assert _error(tmp_path, "[workers\n").key == "(syntax)"
    with pytest.raises(ConfigError) as info:
        load_policy(tmp_path / "nope.toml")
    assert info.value.key == "(file)"


# --- policy check ---


def test_check_warns_about_an_unreachable_worker(tmp_path: Path) -> None:
    text = BASE + '\n[workers.spare]\nprovider = "acme"\nmodel = "other"\n'
    text += "max_output_tokens = 10\ntimeout = 5\n"
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert any(w.startswith("workers.spare: never used") for w in warnings)


def test_check_warns_about_a_shadowed_rule(tmp_path: Path) -> None:
    text = BASE + '\n[[rules]]\nwhen = { step_type = ["edit"], escalations = 0 }\nworker = "big"\n'
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert "rules[2] can never match: rules[0] takes every step it covers" in warnings


def test_check_warns_about_a_rule_shadowed_by_several(tmp_path: Path) -> None:
    text = BASE + '\n[[rules]]\nwhen = { step_type = ["plan", "run"], escalations = 0 }\n'
    text += 'worker = "small"\n'
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert "rules[2] can never match: rules[0], rules[1] take every step it covers" in warnings


def test_check_keeps_quiet_about_a_rule_that_still_matches_somewhere(tmp_path: Path) -> None:
    text = BASE + '\n[[rules]]\nwhen = { step_type = ["edit", "plan"] }\nworker = "small"\n'
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert not any(w.startswith("rules[2]") for w in warnings)  # it takes plan and edit at level 1


def test_check_warns_about_a_rule_beyond_the_ladder(tmp_path: Path) -> None:
    text = BASE + '\n[[rules]]\nwhen = { escalations = 5 }\nworker = "big"\n'
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert any(w.startswith("rules[2] can never match") and "0..1" in w for w in warnings)


def test_check_says_which_effort_an_unaccepted_one_resolves_to(tmp_path: Path) -> None:
    text = BASE.replace('effort = "high"', 'effort = "medium"')
    text = text.replace("timeout = 60", 'timeout = 60\neffort = "high"')
    check = check_policy(_load(tmp_path, text), REGISTRY)
    assert any(
        w.startswith("workers.big.effort") and "resolves to 'low'" in w for w in check.warnings
    )
    assert any(
        w.startswith("workers.small.effort") and "accepts no effort" in w for w in check.warnings
    )
    assert {r.worker.effort for r in check.rows if r.worker and r.worker.name == "big"} == {"low"}


def test_check_warns_about_unknown_models_and_providers(tmp_path: Path) -> None:
    text = BASE.replace('model = "small"', 'model = "tiny"')
    text = text.replace('provider = "acme"\nmodel = "big"', 'provider = "zeta"\nmodel = "big"')
    check = check_policy(_load(tmp_path, text), REGISTRY)
    assert any(w.startswith("workers.small.model: 'tiny'") for w in check.warnings)
    assert any(w.startswith("workers.big.provider: 'zeta'") for w in check.warnings)
    small = next(r.worker for r in check.rows if r.worker and r.worker.name == "small")
    assert (small.input_price, small.effort) == ("unknown", "?")


def test_check_warns_about_a_same_family_second_opinion(tmp_path: Path) -> None:
    text = BASE + '\n[review]\nreviewer = "big"\nsecond_opinion = "small"\n'
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert any(w.startswith("review.second_opinion") and "alpha" in w for w in warnings)


def test_check_accepts_a_second_opinion_from_another_family(tmp_path: Path) -> None:
    text = BASE + '\n[workers.judge]\nprovider = "acme"\nmodel = "other"\n'
    text += 'max_output_tokens = 10\ntimeout = 5\n\n[review]\nreviewer = "big"\n'
    text += 'second_opinion = "judge"\n'
    assert check_policy(_load(tmp_path, text), REGISTRY).warnings == ()


def test_check_warns_about_unpriced_models_unless_allowed(tmp_path: Path) -> None:
    text = BASE.replace('model = "small"', 'model = "mystery"')
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert any(w.startswith("workers.small:") and "no known price" in w for w in warnings)
    allowed = _load(tmp_path, text + "\n[ledger]\nallow_unpriced = true\n")
    assert check_policy(allowed, REGISTRY).warnings == ()


def test_check_warns_when_the_last_rung_may_run_short(tmp_path: Path) -> None:
    text = BASE + "\n[limits]\nmax_steps = 20\nsteps_per_rung = 15\n"
    warnings = check_policy(_load(tmp_path, text), REGISTRY).warnings
    assert any(w.startswith("limits: max_steps 20") for w in warnings)


def test_rendered_table_has_every_step_type_and_level(tmp_path: Path) -> None:
    text = BASE + '\n[review]\nreviewer = "big"\n'
    out = render_policy_check(check_policy(_load(tmp_path, text), REGISTRY))
    lines = out.splitlines()
    for level in (0, 1):
        for step_type in StepType:
            assert any(line.split()[:2] == [str(level), step_type.value] for line in lines)
    assert "reviewer" in out
    assert "no warnings" in out


def test_rendered_check_lists_prices_and_warnings(
    shipped_registry: dict[str, ProviderSpec],
) -> None:
    out = render_policy_check(
        check_policy(load_policy(POLICIES / "tokenfactory-ladder.toml"), shipped_registry)
    )
    assert "2nd opinion" in out
    assert "unknown" in out
    assert "warning: workers.ultra" in out


def test_a_policy_as_run_json_keeps_it_validates_to_the_same_policy():
    """`ssw run --continue` takes the earlier run's policy from run.json (its JSON dump, unset
    keys as null); a rule's `escalations = null` once failed there with a TypeError."""
    demo = ROOT / "src" / "stepswitch" / "demo" / "policy.toml"
    for path in [*sorted(POLICIES.glob("*.toml")), demo]:
        policy = load_policy(path)
        again = validate_policy(policy.model_dump(mode="json"), str(path))
        assert again.model_dump() == policy.model_dump(), path
