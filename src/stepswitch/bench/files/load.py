"""The loader of the bench's files: one error, one way to read a file as its model, one way to
write one (bench/files/__init__.py says which files there are)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from stepswitch.errors import UsageError
from stepswitch.util import config_model
from stepswitch.util.text import escape_json_controls

RESULTS_FILE = "results.csv"
SUMMARY_FILE = "summary.json"
GRADE_FILE = "grade.json"
RUN_FILE = "run.json"
M = TypeVar("M", bound=BaseModel)


class BenchFileError(UsageError):
    """A bench file that is not what the bench writes (exit 2)."""


class Ours(BaseModel):
    """A file only the bench writes: a key it never writes is refused."""

    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    """A file a newer version may add keys to (a journal row, run.json): they are ignored."""

    model_config = ConfigDict(extra="ignore")


def first_problem(exc: ValidationError) -> str:
    return config_model.first_problem(exc, "(file)")


def read_text(path: Path, name: str | None) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BenchFileError(f"{name or path.name} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchFileError(f"{name or path.name} cannot be read ({exc})") from None


def parse_json(model: type[M], text: str, name: str) -> M:
    """`text` (a file's content, `name` its path as shown) as `model`, or a BenchFileError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchFileError(f"{name} is not JSON: line {exc.lineno}: {exc.msg}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BenchFileError(f"{name}: {first_problem(exc)}") from None


def read_json(model: type[M], path: Path, name: str | None = None) -> M:
    return parse_json(model, read_text(path, name), name or path.name)


def json_text(model: BaseModel) -> str:
    return escape_json_controls(model.model_dump_json(indent=2)) + "\n"


def write_file(path: Path, text: str) -> None:
    """The file, whole or not at all (staged, then moved over)."""
    staged = path.with_name(path.name + ".tmp")
    staged.write_text(text, encoding="utf-8", newline="\n")
    staged.replace(path)
