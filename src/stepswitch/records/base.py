"""The base of every version-2 record (run.json, steps.jsonl): written strictly, read leniently.

Built by this ssw, a record takes only the fields it declares: a misspelt or stray one is an
error, never silently lost. Read from disk (`read`, `read_json`), a field this ssw does not know,
one a newer ssw wrote, is ignored, at any depth, so that a newer run folder still loads
(docs/decisions/0057-one-owner-per-step-and-lenient-records.md)."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict
from pydantic.config import ExtraValues

# What reading does with a field the model does not declare (pydantic's `extra` for one call).
READ_EXTRA: ExtraValues = "ignore"


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @classmethod
    def read(cls, data: Any) -> Self:
        """The record from data on disk; fields a newer ssw wrote are ignored."""
        return cls.model_validate(data, extra=READ_EXTRA)

    @classmethod
    def read_json(cls, text: str | bytes) -> Self:
        return cls.model_validate_json(text, extra=READ_EXTRA)
