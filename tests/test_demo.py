"""`ssw demo` shows what routing is for: each scripted step priced as if a real ladder had served
it, beside the same steps on its largest model alone, while the records keep the truth ($0), and
it ends with the run's replay page."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.cli.demo import run_demo
from stepswitch.demo.as_if import AS_IF, LARGEST, as_if_models, step_usd
from stepswitch.errors import ConfigError
from stepswitch.records.folder import load_run
from stepswitch.records.money import CostRange, format_usd
from stepswitch.records.steps import ModelStep
from stepswitch.registry.presets import load_registry

STEP_LINE = re.compile(r"^\s*(\d+) (\w+)\s+(\w+)\s+scripted-\w+ .*\[scripted\]$")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], Path]]:
    """One demo run for the module: it takes several seconds on a loaded machine."""
    target = tmp_path_factory.mktemp("demo") / "sample"
    lines: list[str] = []
    with pytest.MonkeyPatch.context() as patch:  # run_demo puts its Python first on PATH
        patch.setenv("PATH", os.environ["PATH"])
        patch.delenv("SSW_LEDGER", raising=False)
        record = run_demo(target, lines.append)
    yield lines, target / ".ssw" / "runs" / record.run_id


def test_each_step_line_is_followed_by_its_price_as_if_served_by_its_ladder_model(
    demo: tuple[list[str], Path],
):
    lines, folder = demo
    steps = load_run(folder).model_steps
    models = as_if_models(load_registry())

    numbered = [i for i, line in enumerate(lines) if STEP_LINE.match(line)]
    assert len(numbered) == len(steps) == 12
    for i, step in zip(numbered, steps, strict=True):
        usd = format_usd(step_usd(models[step.worker].price, step))
        assert lines[i + 1].split() == [
            usd,
            "scripted",
            "reply,",
            "priced",
            "as",
            "if",
            "served",
            "by",
            AS_IF[step.worker][1],
        ]


def test_the_bill_ends_with_the_routed_total_beside_the_largest_model_alone(
    demo: tuple[list[str], Path],
):
    lines, folder = demo
    steps = load_run(folder).model_steps
    models = as_if_models(load_registry())
    routed = sum(step_usd(models[s.worker].price, s) for s in steps)
    alone = sum(step_usd(models[LARGEST].price, s) for s in steps)

    text = "\n".join(lines)
    assert alone > routed > 0
    assert re.search(rf"routed by the policy\s+\{format_usd(routed)} over 12 steps", text)
    assert re.search(
        rf"on claude-opus-5 alone\s+\{format_usd(alone)} \({alone / routed:.1f}x the routed bill\)",
        text,
    )
    assert "as if served by the Anthropic ladder" in text
    assert "the recorded bill stays $0.0000: no model was called" in text


def test_the_records_keep_the_truth_and_the_last_line_is_the_replay_page(
    demo: tuple[list[str], Path],
):
    lines, folder = demo
    loaded = load_run(folder)

    assert loaded.run.scripted and loaded.run.totals.cost == CostRange()
    assert {s.cost for s in loaded.model_steps} == {CostRange()}
    page = folder / "replay" / "index.html"
    assert lines[-1] == f"replay page: {page}"
    html = page.read_text(encoding="utf-8")
    assert "SCRIPTED" in html and loaded.run.run_id in html


def test_a_step_priced_at_list_price_bills_cached_input_at_its_rate():
    opus = as_if_models(load_registry())["large"].price
    step = ModelStep(
        run_id="r", seq=1, step=1, step_type="plan", worker="large", provider="scripted",
        model="scripted-large", prompt_tokens=1_000_000, cached_tokens=200_000,
        completion_tokens=100_000,
    )  # fmt: skip

    # 800k uncached at $5, 200k cached at $0.50, 100k out at $25 per million
    assert step_usd(opus, step) == pytest.approx(4.0 + 0.1 + 2.5)


def test_every_ladder_model_has_a_list_price_with_its_source():
    models = as_if_models(load_registry())

    assert {w: (m.provider, m.model) for w, m in models.items()} == AS_IF
    assert all(m.price.source.startswith("https://") for m in models.values())


def test_a_ladder_model_without_a_known_price_is_refused():
    registry = dict(load_registry())
    anthropic = registry["anthropic"]
    opus = anthropic.models["claude-opus-5"].model_copy(update={"price": "unknown"})
    registry["anthropic"] = anthropic.model_copy(
        update={"models": {**anthropic.models, "claude-opus-5": opus}}
    )

    with pytest.raises(ConfigError, match=r"models\.claude-opus-5\.price"):
        as_if_models(registry)
