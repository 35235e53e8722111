"""Providers for a run's workers: the factory type `run_task` takes, and the default one over
HTTP from the registry's presets."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stepswitch.policy.model import WorkerConfig
from stepswitch.registry.presets import ProviderSpec
from stepswitch.wire.client import HttpProvider, new_http_client
from stepswitch.wire.open import open_provider
from stepswitch.wire.provider import Provider

# (worker name, its configuration) -> the provider that serves it
ProviderFactory = Callable[[str, WorkerConfig], Provider]


class HttpProviders:
    """A ProviderFactory over the registry: keys from `env`, base URLs overridable per preset
    (the scripted preset's loopback server), one httpx client shared by every worker."""

    def __init__(
        self,
        registry: Mapping[str, ProviderSpec],
        *,
        env: Mapping[str, str] | None = None,
        base_urls: Mapping[str, str] | None = None,
    ) -> None:
        self.registry = registry
        self.env = env
        self.base_urls = dict(base_urls or {})
        self._http = new_http_client()  # one connection pool (and TLS context) for every worker
        self._open: dict[str, HttpProvider] = {}

    def __call__(self, name: str, worker: WorkerConfig) -> Provider:
        if name not in self._open:
            self._open[name] = open_provider(
                self.registry[worker.provider],
                worker.model,
                base_url=self.base_urls.get(worker.provider, worker.base_url),
                wire_format=worker.wire_format,
                env=self.env,
                http=self._http,
            )
        return self._open[name]

    def close(self) -> None:
        self._http.close()
