"""Where a provider key may go (ADR 0048): to the origin a shipped preset gives that key
variable, or to a host the user named with --trust-endpoint. A request that carries no key may
go to loopback. Every path that sends a key or a task to a provider asks `check_destination`
first, so a policy, a preset or a script from someone else cannot choose where the key goes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from stepswitch.errors import UsageError
from stepswitch.registry.presets import ProviderSpec, load_shipped_registry
from stepswitch.util.text import escape_controls

if TYPE_CHECKING:
    from stepswitch.policy.model import WorkerConfig

TRUST_FLAG = "--trust-endpoint"  # cli/trust_option.py
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, order=True)
class Origin:
    """Where a request goes, as httpx connects: scheme, host (IDNA, lower case) and port."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.scheme == "https" and self.port == 443:
            return host  # the usual case reads as the host alone
        default = _DEFAULT_PORTS.get(self.scheme)
        return f"{self.scheme}://{host}" + ("" if self.port == default else f":{self.port}")


def origin_of(url: str) -> Origin:
    """The origin httpx will connect to; a URL that urllib reads as another host, or that
    carries a user name or password, is refused rather than guessed at."""
    import httpx  # on demand: `ssw` commands that send nothing do not pay for it

    shown = escape_controls(url, keep_newlines=False)
    try:
        parsed = httpx.URL(url)
        other = urlsplit(url)
        host = parsed.raw_host.decode("ascii").lower()
        other_host = (other.hostname or "").encode("idna").decode("ascii").lower()
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise UsageError(f"{shown} is not a URL ssw can send to ({exc})") from None
    if parsed.userinfo or "@" in other.netloc:
        raise UsageError(f"{shown}: a provider URL may not carry a user name or password")
    if parsed.scheme not in _DEFAULT_PORTS or not host or host != other_host:
        raise UsageError(f"{shown}: its host cannot be read one way only; write it plainly")
    return Origin(parsed.scheme, host, parsed.port or _DEFAULT_PORTS[parsed.scheme])


def _host_of_flag(value: str) -> str:
    """The host as `origin_of` reads it (IDNA, lower case), so a named host matches itself."""
    host = value.strip().removeprefix("[").removesuffix("]")
    if not host or any(c in host for c in "/@?#\\ []") or host.count(":") == 1:
        raise UsageError(
            f"{TRUST_FLAG} {escape_controls(value, keep_newlines=False)!r}: give a host name "
            "alone, e.g. api.example.com or 127.0.0.1 (any port and scheme of it is trusted)"
        )
    return origin_of(f"http://[{host}]/" if ":" in host else f"http://{host}/").host


@dataclass(frozen=True)
class Trust:
    """The hosts the user named on the command line; nothing else widens where keys go."""

    hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def named(cls, values: Iterable[str] | None) -> Trust:
        return cls(frozenset(_host_of_flag(v) for v in values or ()))

    def with_url(self, url: str | None) -> Trust:
        """The same, plus the host of a URL the user typed (`--base-url`)."""
        return self if url is None else Trust(self.hosts | {origin_of(url).host})


@cache
def shipped_origins() -> dict[str, frozenset[Origin]]:
    """Key variable -> the origins the shipped presets send it to."""
    found: dict[str, set[Origin]] = {}
    for spec in load_shipped_registry().values():
        if spec.api_key_env:
            found.setdefault(spec.api_key_env, set()).add(origin_of(spec.base_url))
    return {key: frozenset(origins) for key, origins in found.items()}


@dataclass(frozen=True)
class Destination:
    """A URL that will receive requests, and the key variable whose key goes with them."""

    where: str  # who sends there, for the refusal: "workers.small (tokenfactory)"
    key_env: str | None
    url: str


def check_destination(destination: Destination, trust: Trust) -> Origin:
    """The destination's origin, or a UsageError naming the host, the key and the fix."""
    origin = origin_of(destination.url)
    key_env = destination.key_env
    if origin.host in trust.hosts:
        return origin
    if key_env is None and origin.host in LOOPBACK_HOSTS:
        return origin
    if key_env is not None and origin in shipped_origins().get(key_env, frozenset()):
        return origin
    shipped = sorted(str(o) for o in shipped_origins().get(key_env or "", frozenset()))
    what = (
        f"would send {key_env} to {origin}"
        + (f", which the shipped presets send only to {', '.join(shipped)}" if shipped else "")
        if key_env is not None
        else f"would send the task and the code to {origin}, which is not loopback"
    )
    raise UsageError(
        escape_controls(
            f"{destination.where} {what}; if you trust {origin.host}, pass "
            f"{TRUST_FLAG} {origin.host}",
            keep_newlines=False,
        )
    )


def worker_destinations(
    workers: Mapping[str, WorkerConfig],
    registry: Mapping[str, ProviderSpec],
    base_urls: Mapping[str, str] | None = None,
) -> list[Destination]:
    """Where each worker's calls go: `base_urls` (per preset, set by ssw itself, e.g. the
    scripted server), else the worker's `base_url`, else its preset's."""
    found = []
    for name, worker in workers.items():
        spec = registry.get(worker.provider)
        if spec is None:
            continue  # an unknown provider is refused by name elsewhere
        url = (base_urls or {}).get(worker.provider, worker.base_url) or spec.base_url
        found.append(Destination(f"workers.{name} ({spec.name})", spec.api_key_env, url))
    return found


def check_destinations(destinations: Iterable[Destination], trust: Trust) -> str | None:
    """Every destination checked; the line a run starts with naming each host that will
    receive a key (None when no key is sent)."""
    sent: dict[str, set[Origin]] = {}
    for destination in destinations:
        origin = check_destination(destination, trust)
        if destination.key_env is not None:
            sent.setdefault(destination.key_env, set()).add(origin)
    if not sent:
        return None
    parts = [
        f"{key} -> {', '.join(str(o) for o in sorted(origins))}"
        for key, origins in sorted(sent.items())
    ]
    return escape_controls("keys: " + "; ".join(parts), keep_newlines=False)


def check_sender(
    spec: ProviderSpec, base_url: str | None, trust: Trust, print_line: Callable[[str], None]
) -> None:
    """For a command that calls one preset (`ssw probe`, `ssw prices refresh`): a --base-url
    the user typed is theirs to trust; the preset's own URL passes as a worker's must."""
    where = f"the {spec.name} preset"
    destination = Destination(where, spec.api_key_env, base_url or spec.base_url)
    line = check_destinations([destination], trust.with_url(base_url))
    if line:
        print_line(line)
