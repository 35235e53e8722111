"""The Provider protocol: what every wire format's HTTP provider implements, and what `run_task`
takes a factory of (tests and benchmarks inject their own)."""

from __future__ import annotations

from typing import Protocol, Required, TypedDict

from stepswitch.wire.types import CallHooks, Completion, Request


class CallLimits(TypedDict, total=False):
    """Provider.complete's keyword arguments, as one type for a provider that wraps another or
    reads only some of them."""

    deadline: Required[float]
    timeout: float | None
    hooks: CallHooks | None


class Provider(Protocol):
    def complete(
        self,
        request: Request,
        *,
        deadline: float,
        timeout: float | None = None,
        hooks: CallHooks | None = None,
    ) -> Completion:
        """One call, finished by the earlier of the deadline and the timeout; raises
        ProviderError (or a subclass) when it cannot give a Completion."""
        ...
