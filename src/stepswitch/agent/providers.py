"""Providers for a run's workers: the factory type `run_task` takes, the default one over HTTP
from the registry's presets, and which of a call's failures are the provider's."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import httpx

from stepswitch.errors import (
    AuthError,
    DeadlineExceeded,
    MalformedResponse,
    ProviderError,
    RetriesExhausted,
)
from stepswitch.policy.model import WorkerConfig
from stepswitch.registry.presets import ProviderSpec
from stepswitch.registry.trust import Destination, Trust, check_destination
from stepswitch.wire.client import HttpProvider, new_http_client, warm_up_http
from stepswitch.wire.open import open_provider
from stepswitch.wire.provider import Provider

# (worker name, its configuration) -> the provider that serves it
ProviderFactory = Callable[[str, WorkerConfig], Provider]


class HttpProviders:
    """A ProviderFactory over the registry: keys from `env`, base URLs overridable per preset
    (the scripted preset's loopback server), every URL checked against `trust` before its
    first call (registry/trust.py), one httpx client for the https workers and one for
    the plain-http ones (local servers: no CA bundle to load), each made on first use."""

    def __init__(
        self,
        registry: Mapping[str, ProviderSpec],
        *,
        env: Mapping[str, str] | None = None,
        base_urls: Mapping[str, str] | None = None,
        trust: Trust | None = None,
    ) -> None:
        self.registry = registry
        self.env = env
        self.trust = trust or Trust()
        self.base_urls = dict(base_urls or {})
        self._clients: dict[bool, httpx.Client] = {}  # tls -> one connection pool
        self._open: dict[str, HttpProvider] = {}
        warm_up_http()  # the first client is made after the worktree and the pre-flight

    def _client(self, base_url: str) -> httpx.Client:
        tls = not base_url.startswith("http://")
        if tls not in self._clients:
            self._clients[tls] = new_http_client(tls=tls)
        return self._clients[tls]

    def __call__(self, name: str, worker: WorkerConfig) -> Provider:
        if name not in self._open:
            spec = self.registry[worker.provider]
            base_url = self.base_urls.get(worker.provider, worker.base_url) or spec.base_url
            where = f"workers.{name} ({spec.name})"
            check_destination(Destination(where, spec.api_key_env, base_url), self.trust)
            self._open[name] = open_provider(
                spec,
                worker.model,
                base_url=base_url,
                wire_format=worker.wire_format,
                env=self.env,
                http=self._client(base_url),
            )
        return self._open[name]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()


def provider_failure(exc: BaseException, deadline: float) -> str | None:
    """Why a call's failure is the provider's, so that a fallback may take the step: HTTP 429
    or 5xx past the retries, a connection that failed past them, no answer within the worker's
    timeout, a 5xx not retried. None for everything else: a refused key, a request the provider
    rejects, an answer that cannot be read, the run's own time running out (ADR 0038)."""
    if isinstance(exc, AuthError | MalformedResponse) or not isinstance(exc, ProviderError):
        return None
    if isinstance(exc, DeadlineExceeded):
        return "no answer within its timeout" if time.monotonic() < deadline else None
    if isinstance(exc, RetriesExhausted) or (exc.status or 0) >= 500:
        return str(exc)[:200]
    return None
