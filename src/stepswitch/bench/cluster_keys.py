"""The provider keys one task run on a cluster needs, sent with it (ADR 0049).

The bench machine reads them as a local bench does (its environment, or what `ssw`'s start took
out of it) and sends each task run only the variables its policy's providers name, over the
scheduler's TLS connection; on the worker they go down a pipe to the process that runs it, for
that run only. So a worker is started without keys and holds none between runs. The repr shows
names only: Dask logs a failed task's arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stepswitch.registry.presets import ProviderSpec
from stepswitch.util.secrets import looks_secret
from stepswitch.wire.open import api_key_from_env


class TaskRunKeys:
    """Variable name -> key, for one task run; printed as its names only."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values = dict(values or {})

    @property
    def names(self) -> list[str]:
        return sorted(self._values)

    def as_line(self) -> str:
        """The keys as one line of JSON (no tab, no newline: the child's job line holds it)."""
        return json.dumps(self._values, ensure_ascii=True)

    @classmethod
    def from_line(cls, line: str) -> TaskRunKeys:
        values: Any = json.loads(line) if line else {}
        if not isinstance(values, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in values.items()
        ):
            raise ValueError("the keys of a task run are not a table of names and values")
        return cls(values)

    def values(self) -> dict[str, str]:
        return dict(self._values)

    def __repr__(self) -> str:
        return f"TaskRunKeys({', '.join(self.names) or 'none'})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TaskRunKeys) and other._values == self._values

    __hash__ = None  # type: ignore[assignment]


def keys_for(
    providers: list[str], registry: Mapping[str, ProviderSpec], env: Mapping[str, str]
) -> TaskRunKeys:
    """The keys the named providers need, from env (an AuthError naming a missing one)."""
    values: dict[str, str] = {}
    for name in providers:
        spec = registry[name]
        key = api_key_from_env(spec, env)
        if spec.api_key_env and key is not None:
            values[spec.api_key_env] = key
    return TaskRunKeys(values)


def secret_names(env: Mapping[str, str]) -> list[str]:
    """On a worker: the names of the variables in its environment that look like keys."""
    return sorted(name for name, value in env.items() if value and looks_secret(name, value))
