"""Providers for a run's workers: the factory type `run_task` takes, the default one over HTTP
from the registry's presets, and which of a call's failures are the provider's."""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial

import httpx

from stepswitch.errors import (
    AuthError,
    DeadlineExceeded,
    MalformedResponse,
    ProviderError,
    RetriesExhausted,
    SswError,
)
from stepswitch.policy.model import WorkerConfig
from stepswitch.registry.presets import ProviderSpec
from stepswitch.registry.trust import Destination, Trust, check_destination
from stepswitch.util.on_thread import OnThread
from stepswitch.wire.client import HttpProvider, new_http_client, tls_context, warm_up_http
from stepswitch.wire.open import codec_for, open_provider, wire_format_of
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
        self._expected: OnThread[dict[bool, ssl.SSLContext]] | None = None
        warm_up_http()  # the first client is made after the worktree and the pre-flight

    def expect(self, workers: Iterable[WorkerConfig]) -> None:
        """Make, on a thread of its own, what the first calls of these workers need: the TLS
        context of each kind of URL they use (loading the CA bundle costs tens of ms) and their
        wire formats' codecs, while the run makes its worktree and pre-flight. A failure there
        is left to the first call, which makes its own and says what failed."""
        tls: set[bool] = set()
        formats: set[str] = set()
        for worker in workers:
            if worker.provider not in self.registry:
                continue  # the call says so
            spec, base_url = self._where(worker)
            tls.add(_is_tls(base_url))
            with contextlib.suppress(SswError):  # the call says what is wrong with it
                formats.add(wire_format_of(spec, worker.model, worker.wire_format))
        self._expected = OnThread(partial(_prepare, tls, formats), name="ssw-warm-tls")

    def _where(self, worker: WorkerConfig) -> tuple[ProviderSpec, str]:
        """The worker's preset and the base URL its calls go to."""
        spec = self.registry[worker.provider]
        return spec, self.base_urls.get(worker.provider, worker.base_url) or spec.base_url

    def _client(self, base_url: str) -> httpx.Client:
        tls = _is_tls(base_url)
        if tls not in self._clients:
            ready = self._expected.result() if self._expected is not None else {}
            self._clients[tls] = new_http_client(tls=tls, context=ready.get(tls))
        return self._clients[tls]

    def __call__(self, name: str, worker: WorkerConfig) -> Provider:
        if name not in self._open:
            spec, base_url = self._where(worker)
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


def _is_tls(base_url: str) -> bool:
    return not base_url.startswith("http://")


def _prepare(tls: set[bool], formats: set[str]) -> dict[bool, ssl.SSLContext]:
    """The TLS contexts, as httpx makes them, and the codecs' modules, imported."""
    contexts = {}
    for kind in tls:
        with contextlib.suppress(Exception):  # the first call makes its own and says why
            contexts[kind] = tls_context(kind)
    for wire_format in formats:
        with contextlib.suppress(Exception):
            codec_for(wire_format)
    return contexts


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
