"""Configuration files as pydantic models: one strict base, one loader, and one translation of a
validation error into the one-line ConfigError (file, key, problem, fix). A file whose own
wording says more (the policy's "unknown key" and its allowed keys) passes how to word the key,
the problem or the fix; pydantic's first error is picked here and nowhere else (ADR 0059)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from stepswitch.errors import ConfigError
from stepswitch.util.inputs import read_text_input
from stepswitch.util.toml import read_toml

Format = Literal["toml", "yaml", "json"]
M = TypeVar("M", bound=BaseModel)
# One part of the message (key, problem or fix), worded from pydantic's error.
Wording = Callable[[ErrorDetails], str]


class Strict(BaseModel):
    """A file the user writes: a key the model does not declare is an error that names it, and
    what was loaded never changes afterwards."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def key_of(loc: Sequence[int | str], prefix: str = "", drop: Sequence[str] = ()) -> str:
    """A pydantic error location as the file writes it: `workers.mid.timeout`, `rules[0].when`.
    `drop` names parts that are no key in the file (a union member's class name)."""
    key = prefix
    for part in loc:
        if isinstance(part, str) and part in drop:
            continue
        if isinstance(part, int):
            key += f"[{part}]"
        else:
            key += f".{part}" if key else part
    return key or "(top level)"


def dotted(loc: Sequence[int | str], empty: str = "") -> str:
    """A location as pydantic writes it (`replies.0.text`), `empty` for the whole document."""
    return ".".join(str(part) for part in loc) or empty


def first_error(exc: ValidationError) -> ErrorDetails:
    """The error a one-line message names: pydantic's first."""
    return exc.errors()[0]


def first_problem(exc: ValidationError, empty: str = "") -> str:
    """`where: what` of the first error, for a message that is no ConfigError."""
    first = first_error(exc)
    return f"{dotted(first['loc'], empty)}: {first['msg']}"


def _key(error: ErrorDetails) -> str:
    return key_of(error["loc"])


def _msg(error: ErrorDetails) -> str:
    return error["msg"]


def validate(
    model: type[M],
    data: Any,
    file: str,
    *,
    key: Wording = _key,
    problem: Wording = _msg,
    fix: str | Wording = "",
    from_json: bool = False,
) -> M:
    """`data` as `model`, or the one-line ConfigError naming `file` and the first error's key,
    problem and fix, each worded by `key`, `problem` and `fix` (a fix may be plain text).
    `from_json`: `data` is a JSON document, parsed by pydantic (bad JSON is its first error)."""
    try:
        return model.model_validate_json(data) if from_json else model.model_validate(data)
    except ValidationError as exc:
        first = first_error(exc)
        said = fix if isinstance(fix, str) else fix(first)
        raise ConfigError(file, key(first), problem(first), said) from exc


def load_model(
    path: Path,
    model: type[M],
    format: Format,
    *,
    what: str,
    fix: str,
    key: Wording = _key,
    problem: Wording = _msg,
    fix_for: str | Wording | None = None,
) -> M:
    """The file at `path`, parsed as `format`, as `model`. A file that is missing or not text
    names `what` it should be and `fix`; a syntax error says so; a validation error is worded by
    `key`, `problem` and `fix_for` (None: `fix`). TOML goes through read_toml, which bounds how
    deep a document nests (ADR 0046)."""
    data = _parse(path, format, what, fix)
    return validate(
        model, data, str(path), key=key, problem=problem, fix=fix if fix_for is None else fix_for
    )


def _parse(path: Path, format: Format, what: str, fix: str) -> Any:
    if format == "toml":
        return read_toml(path, what, fix)
    text = read_text_input(path, what, fix)
    if format == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(str(path), "(syntax)", str(exc), "fix the JSON") from exc
    import yaml  # here: most commands read no YAML, and importing it costs a few ms

    try:
        # libyaml's loader when present: the pure-Python one costs ~10 ms per file.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), "(syntax)", str(exc).splitlines()[0], "fix the YAML") from exc
