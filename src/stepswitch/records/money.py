"""Dollars as a range: certain when low == high, a bound when usage was lost. One value type for
the records, the ledger's reports and the terminal, and one way to print it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class CostRange(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    low: float = Field(default=0.0, ge=0)  # what is certain
    high: float = Field(default=0.0, ge=0)  # the most it can have been

    @model_validator(mode="after")
    def _ordered(self) -> CostRange:
        if self.high < self.low:
            object.__setattr__(self, "high", self.low)
        return self

    @classmethod
    def exact(cls, usd: float) -> CostRange:
        return cls(low=usd, high=usd)

    @property
    def is_exact(self) -> bool:
        return self.high <= self.low

    def __add__(self, other: CostRange) -> CostRange:
        return CostRange(low=self.low + other.low, high=self.high + other.high)

    def covering(self, other: CostRange) -> CostRange:
        """Both accounts of the same spend at once: what either says is certain, or could be."""
        return CostRange(low=max(self.low, other.low), high=max(self.high, other.high))

    def __str__(self) -> str:
        return format_usd(self.low, self.high)


def format_usd(low: float, high: float | None = None) -> str:
    """`$0.0123`, or `$0.0123-$0.0456` when the high end is above the low: never one guess."""
    if high is None or high <= low:
        return f"${low:.4f}"
    return f"${low:.4f}-${high:.4f}"
