"""The demo's bill as if real models had served its scripted steps: each step's token counts
priced at the list price of the model its worker stands for on the Anthropic ladder, from the
registry's sourced presets, beside the same steps on the ladder's largest model alone. A display
only: the run's records and the ledger keep the truth (scripted replies cost $0)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from stepswitch.agent.events import Event, RunUpdate
from stepswitch.errors import ConfigError
from stepswitch.ledger.pricing import step_usd
from stepswitch.records.money import format_usd
from stepswitch.records.steps import ModelStep
from stepswitch.registry.presets import SCRIPTED_PROVIDER, Price, ProviderSpec, get_model

LADDER = "the Anthropic ladder"
# The demo policy's workers and the models they stand for: Haiku navigates, reads and
# summarizes, Sonnet edits, runs and triages, Opus plans and reviews; the second opinion comes
# from another family (OpenAI's gpt-5-mini), as a real policy's would.
AS_IF: dict[str, tuple[str, str]] = {
    "small": ("anthropic", "claude-haiku-4-5"),
    "mid": ("anthropic", "claude-sonnet-5"),
    "large": ("anthropic", "claude-opus-5"),
    "other": ("openai", "gpt-5-mini"),
}
LARGEST = "large"
# Where each price came from is in registry/providers/<provider>.toml.
LABEL = "scripted reply, priced as if served by"


@dataclass(frozen=True)
class AsIf:
    worker: str
    provider: str
    model: str
    price: Price


def as_if_models(registry: Mapping[str, ProviderSpec]) -> dict[str, AsIf]:
    """The ladder's models with their list prices; a price that is unknown or has no source is a
    ConfigError, so the demo never shows a figure it cannot back."""
    found = {}
    for worker, (provider, model) in AS_IF.items():
        spec = get_model(registry[provider], model)
        price = spec.price
        if not isinstance(price, Price) or not price.source.startswith("https://"):
            raise ConfigError(
                f"registry/providers/{provider}.toml",
                f"models.{model}.price",
                "the demo prices its steps at this model's list price, which needs a source",
                "restore a sourced price, or map the worker to another model in demo/as_if.py",
            )
        found[worker] = AsIf(worker, provider, model, price)
    return found


def stands_for_the_ladder(workers: Mapping[str, Any]) -> bool:
    """Whether a run's workers are the demo's: each on the scripted provider and named for a
    model of the ladder, so its steps can be priced as if that model had served them."""
    return bool(workers) and all(
        name in AS_IF and isinstance(w, Mapping) and w.get("provider") == SCRIPTED_PROVIDER
        for name, w in workers.items()
    )


class AsIfBill:
    """A sink: after each step's line, what the step would have cost on its ladder model; after
    the bill, the routed total beside the largest model alone."""

    def __init__(self, models: dict[str, AsIf], print_line: Callable[[str], None]) -> None:
        self.models = models
        self.print_line = print_line
        self.routed: dict[str, float] = defaultdict(float)
        self.alone = 0.0
        self.steps = 0

    @property
    def largest(self) -> AsIf:
        return self.models[LARGEST]

    def on_event(self, event: Event) -> None:
        if isinstance(event, ModelStep):
            self._step(event)
        elif isinstance(event, RunUpdate) and event.final:
            for line in self.summary():
                self.print_line(line)

    def add(self, step: ModelStep) -> tuple[AsIf, float] | None:
        """Count the step in the bill: its ladder model and what it would have cost there."""
        model = self.models.get(step.worker)
        if model is None:
            return None
        usd = step_usd(model.price, step)
        self.routed[step.worker] += usd
        self.alone += step_usd(self.largest.price, step)
        self.steps += 1
        return model, usd

    def _step(self, step: ModelStep) -> None:
        priced = self.add(step)
        if priced is None:
            self.print_line(f"{'':>14}(worker {step.worker} stands for no model of {LADDER})")
            return
        model, usd = priced
        self.print_line(f"{'':>14}{format_usd(usd):>9}  {LABEL} {model.model}")

    def summary(self) -> list[str]:
        routed = sum(self.routed.values())
        dates = ", ".join(sorted({str(m.price.as_of) for m in self.models.values()}))
        ratio = f" ({self.alone / routed:.1f}x the routed bill)" if routed > 0 else ""
        lines = [
            f"as if served by {LADDER}: the scripted replies' token counts at list prices "
            f"(registry/providers/, as of {dates})"
        ]
        lines += [
            f"  {w:<6} {m.model:<20} {format_usd(self.routed[w]):>9}"
            for w, m in self.models.items()
            if w in self.routed
        ]
        lines += [
            f"  {'routed by the policy':<27} {format_usd(routed):>9} over {self.steps} steps",
            f"  {'on ' + self.largest.model + ' alone':<27} {format_usd(self.alone):>9}{ratio}",
            "  the recorded bill stays $0.0000: no model was called",
        ]
        return lines
