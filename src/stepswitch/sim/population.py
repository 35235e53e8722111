"""The population file: how each tier of simulated model behaves, at each reasoning effort it
lists, and which model plays which tier. Strict (extra=forbid): a misspelt key is an error that
names it. A request's `reasoning_effort` picks the tier's `efforts.<effort>` table, whose fields
replace the tier's own; an effort the tier does not list (or none sent) plays the tier's own
fields."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from stepswitch.registry.presets import EFFORT_ORDER
from stepswitch.util.config_model import Strict, load_model

Rate = Annotated[float, Field(ge=0.0, le=1.0)]
Count = Annotated[int, Field(ge=0, le=1_000_000)]


class EffortBehaviour(Strict):
    """What changes at one reasoning effort; a field left out keeps the tier's own."""

    fix_rate: Rate | None = None
    second_try_rate: Rate | None = None
    tool_error_rate: Rate | None = None
    review_catch_rate: Rate | None = None
    output_tokens: Count | None = None
    reasoning_tokens: Count | None = None


class TierBehaviour(Strict):
    fix_rate: Rate  # an edit attempt applies the reference change
    second_try_rate: Rate | None = None  # the same for every later attempt; None: fix_rate
    tool_error_rate: Rate = 0.0  # a navigate or read call names a path outside the repository
    review_catch_rate: Rate = 1.0  # a review rejects a change that is not the reference
    output_tokens: Count = 200  # visible output per call, at least (a longer reply counts more)
    reasoning_tokens: Count = 0  # reasoning per call, billed as output
    efforts: dict[str, EffortBehaviour] = Field(default_factory=dict)  # by reasoning effort

    @model_validator(mode="after")
    def _known_efforts(self) -> TierBehaviour:
        unknown = sorted(e for e in self.efforts if e not in EFFORT_ORDER)
        if unknown:
            raise ValueError(
                f"unknown reasoning effort {', '.join(unknown)}; use one of "
                f"{', '.join(EFFORT_ORDER)}"
            )
        return self

    def at(self, effort: str | None) -> TierBehaviour:
        """The tier as it plays a call sent with `effort` (its own fields when not listed)."""
        change = self.efforts.get(effort or "")
        if change is None:
            return self
        return self.model_copy(update=change.model_dump(exclude_none=True) | {"efforts": {}})

    def edit_rate(self, attempt: int) -> float:
        """The chance that edit attempt `attempt` (1-based, per task run) is right."""
        if attempt > 1 and self.second_try_rate is not None:
            return self.second_try_rate
        return self.fix_rate


class Population(Strict):
    seed: int = 0
    tiers: dict[str, TierBehaviour] = Field(min_length=1)
    models: dict[str, str] = Field(min_length=1)  # model id -> the tier it plays

    @model_validator(mode="after")
    def _models_play_known_tiers(self) -> Population:
        unknown = sorted({t for t in self.models.values() if t not in self.tiers})
        if unknown:
            raise ValueError(f"models play tiers the file does not define: {', '.join(unknown)}")
        return self

    def tier_of(self, model: str, effort: str | None = None) -> TierBehaviour | None:
        """How `model` plays a call sent with `effort`; None when it plays no tier."""
        tier = self.models.get(model)
        return self.tiers[tier].at(effort) if tier is not None else None


FIX = "see bench/routing/population.toml for a population file"


def load_population(path: Path) -> Population:
    return load_model(path, Population, "toml", what="population", fix=FIX)
