"""`ssw policy suggest` and `ssw policy check --runs` (issue 26, ADR 0040) on committed SYNTHETIC
step records with known answers (tests/fixtures/synthetic_steps/, hand-made: no model and no run
made them). Nothing here says anything about a model."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from stepswitch.policy.measured import load_runs, measure, wilson
from stepswitch.policy.model import validate_policy
from stepswitch.policy.suggest import suggest, switch_costs
from stepswitch.registry.presets import load_registry
from tests.harness.cli import run_ssw_cli

RUNS = Path(__file__).parent / "fixtures" / "synthetic_steps" / "runs"
ORACLE_NULL = Path(__file__).parents[1] / "bench" / "runs" / "oracle-vs-null.all-suites.2026-12-02"
POLICY = """\
[workers.small]
provider = "openai"
model = "gpt-5-nano"
max_output_tokens = 2048
timeout = 60

[workers.mid]
provider = "anthropic"
model = "claude-sonnet-5"
max_output_tokens = 2048
timeout = 60

[workers.large]
provider = "anthropic"
model = "claude-opus-5"
max_output_tokens = 2048
timeout = 60

[[rules]]
worker = "large"

[escalation]
ladder = ["large"]
"""


def policy():
    return validate_policy(tomllib.loads(POLICY), "p.toml")


def test_the_records_measure_what_they_hold() -> None:
    m = measure(load_runs([RUNS])[0])
    read_small = m[("read", "openai", "gpt-5-nano")]
    assert (read_small.steps, read_small.clean) == (20, 20)
    assert read_small.usd_per_step == pytest.approx(0.001)
    read_large = m[("read", "anthropic", "claude-opus-5")]
    # its reads in s-e5 and s-e6 were followed by failed gates
    assert (read_large.steps, read_large.clean, read_large.gated) == (25, 15, 25)
    edit_small = m[("edit", "openai", "gpt-5-nano")]
    assert (edit_small.clean, edit_small.gates_passed, edit_small.escalations) == (0, 0, 2)
    edit_mid = m[("edit", "anthropic", "claude-sonnet-5")]
    assert (edit_mid.steps, edit_mid.clean) == (21, 21)
    assert edit_mid.clean_interval[0] == pytest.approx(0.8454, abs=1e-4)
    assert m[("edit", "anthropic", "claude-opus-5")].clean_interval[0] == pytest.approx(
        0.7225, abs=1e-4
    )  # 10 of 10: too few to clear 80%
    assert wilson(20, 20)[0] == pytest.approx(0.8389, abs=1e-4)


def test_the_suggestion_is_the_cheapest_worker_that_clears_the_floor_with_its_saving() -> None:
    measured = measure(load_runs([RUNS])[0])
    choices = {c.step_type: c for c in suggest(policy(), measured, load_registry(), runs=9,
                                               floor=0.8, min_steps=5)}  # fmt: skip
    assert (choices["read"].current, choices["read"].chosen) == ("large", "small")
    assert (choices["edit"].current, choices["edit"].chosen) == ("large", "mid")
    assert choices["plan"].chosen is None  # no record of a plan step
    # read: 25 of large's reads in 9 runs at $0.01 against $0.001, and a switch that costs
    # 900 cached tokens at small's $0.05 input less large's $0.50 cached price
    assert choices["read"].saving_per_run == pytest.approx(25 / 9 * 0.009 + 900 * 0.45 / 1e6)
    # edit: 10 of large's edits at $0.02 against mid's $0.006, less 1,500 tokens at $2.00 - $0.50
    assert choices["edit"].saving_per_run == pytest.approx(10 / 9 * 0.014 - 1500 * 1.5 / 1e6)
    stricter = {c.step_type: c for c in suggest(policy(), measured, load_registry(), runs=9,
                                                floor=0.85, min_steps=5)}  # fmt: skip
    assert stricter["read"].chosen is None and stricter["edit"].chosen is None


def test_switch_costs_are_the_cached_prefix_resent_uncached() -> None:
    costs = {c.step_type: c for c in switch_costs(policy(), measure(load_runs([RUNS])[0]),
                                                  load_registry())}  # fmt: skip
    edit = costs["edit"]
    assert (edit.current, edit.cached_share, edit.cached_per_step) == ("large", 0.75, 1500)
    assert edit.added_usd == pytest.approx({"mid": 0.00225, "small": 1500 * (0.05 - 0.5) / 1e6})


def ssw(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_ssw_cli(args, cwd=cwd)


def test_the_cli_writes_the_suggested_policy_and_the_commands_that_would_test_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "p.toml").write_text(POLICY)
    done = ssw("policy", "suggest", RUNS, "--policy", "p.toml", "--out", "s.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "  read      large -> small: 20 steps, clean 20/20 [84%, 100%], $0.0010 a step" in out
    assert "  edit      large -> mid: 21 steps, clean 21/21 [85%, 100%], $0.0060 a step" in out
    assert "Nothing is claimed." in out
    assert "ssw claims register C-NEW" in out
    assert (
        "ssw bench run --suite bench/suites/general --contestant p.toml --contestant s.toml" in out
    )
    suggested = validate_policy(tomllib.loads((tmp_path / "s.toml").read_text()), "s.toml")
    from stepswitch.policy.model import route
    from stepswitch.steps import StepType

    assert route(suggested, StepType.READ, 0) == "small"
    assert route(suggested, StepType.EDIT, 0) == "mid"
    assert route(suggested, StepType.PLAN, 0) == "large"
    assert (tmp_path / "s.toml").read_text().startswith("# Suggested by ssw policy suggest")

    check = ssw("policy", "check", "p.toml", "--runs", RUNS, cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert (
        "  edit      large: 75% of its prompt cached (1,500 tokens a step); the next call on "
        "mid +$0.0022, small -$0.0007" in check.stdout
    )


def test_suggest_mistakes_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(POLICY)
    cases = {
        ("policy", "suggest", str(RUNS)): "name the policy to improve on",
        ("policy", "suggest", "--policy", "p.toml"): "name run records",
        ("policy", "suggest", "nowhere", "--policy", "p.toml"): "nowhere: no such folder of runs",
        ("policy", "suggest", ".", "--policy", "p.toml"): "no run records",
        ("policy", "suggest", str(ORACLE_NULL), "--policy", "p.toml"): "no run of a policy in "
        "those records (only built-in contestants')",
    }
    for args, said in cases.items():
        done = ssw(*args, cwd=tmp_path)
        assert done.returncode == 2 and said in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_on_a_scripted_bench_the_suggestion_is_the_routing_the_records_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SCRIPTED: the bench's policy (the demo's shape) puts reads on small and edits on mid; a
    policy that sends every step to large is told to route as the bench's did, for the step
    types the records hold. It says nothing of models: the replies are a script."""
    import tomli_w
    import yaml

    from stepswitch.policy.model import route
    from stepswitch.steps import StepType
    from tests.bench import write_task
    from tests.bench.test_cli_bench import SCRIPT
    from tests.harness.task import DEFAULT_POLICY, use_extra_models

    use_extra_models(monkeypatch, tmp_path)  # scripted-priced: $10 a million tokens
    bench_policy = {
        **DEFAULT_POLICY,
        "workers": {
            **DEFAULT_POLICY["workers"],
            "mid": {**DEFAULT_POLICY["workers"]["mid"], "model": "scripted-priced"},
        },
    }
    everything_large = {**bench_policy, "rules": [{"worker": "large"}]}
    (tmp_path / "bench.toml").write_text(tomli_w.dumps(bench_policy))
    (tmp_path / "large.toml").write_text(tomli_w.dumps(everything_large))
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"replies": SCRIPT}))
    write_task(tmp_path, "t1")
    ran = ssw("bench", "run", "--suite", "suite", "--contestant", "bench.toml",
              "--script", "bench=script.yaml", "--runs-per-task", "3",
              "--out", "runs/b1", cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    done = ssw("policy", "suggest", "--bench", "runs/b1", "--policy", "large.toml",
               "--floor", "0.4", "--min-steps", "3", "--out", "s.toml", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    suggested = validate_policy(tomllib.loads((tmp_path / "s.toml").read_text()), "s.toml")
    recorded = validate_policy(bench_policy, "bench.toml")
    held = {"navigate", "read", "summarize", "plan", "edit", "run", "review"}
    for step_type in StepType:
        if step_type.value in held:
            assert route(suggested, step_type, 0) == route(recorded, step_type, 0), step_type
        else:  # triage: no record of it, so large keeps it
            assert route(suggested, step_type, 0) == "large", step_type
