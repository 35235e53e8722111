"""The key checked before a run makes anything (issue 43, ADR 0065): one cheap authenticated
request per distinct (host, key variable) of the policy's workers, the provider's model list
(`GET <base_url>models`, which each of the four wire formats serves free and behind the key),
sent with the headers the calls send, to the host the calls go to. It runs on threads beside
the pre-flight; a refusal (401 or 403, and Gemini's 400 for a key it does not know) stops the
run in one line naming the provider and the variable, never the key. A network error is said
and is not fatal: the first call will say more."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from stepswitch.errors import AuthError
from stepswitch.policy.model import Policy
from stepswitch.registry.presets import ModelSpec, ProviderSpec
from stepswitch.registry.trust import Destination, Trust, check_destination
from stepswitch.wire.client import new_http_client
from stepswitch.wire.open import codec_for, pick_wire_format

TIMEOUT_S = 10.0
LIST_PATH = "models"  # relative to the base URL, in every wire format ssw speaks

# The statuses by which a wire format's model list refuses a key. Gemini answers a key it does
# not know with 400 INVALID_ARGUMENT (reason API_KEY_INVALID), never 401.
_REFUSING: dict[str, frozenset[int]] = {
    "chat-completions": frozenset({401, 403}),
    "responses": frozenset({401, 403}),
    "messages": frozenset({401, 403}),
    "generate-content": frozenset({400, 401, 403}),
}


@dataclass(frozen=True)
class KeyCheck:
    """One request that tells whether `provider` takes the key in `key_env` at `url`."""

    provider: str
    key_env: str
    url: str
    headers: Mapping[str, str]
    refusing: frozenset[int]


def key_checks(
    policy: Policy,
    registry: Mapping[str, ProviderSpec],
    models: Mapping[str, ModelSpec],
    env: Mapping[str, str],
    trust: Trust,
) -> list[KeyCheck]:
    """One check per distinct (host, key variable) of the workers whose provider takes a key
    and whose preset does not say its list cannot check one (`key_check = false`). `models`:
    each worker's model, as `worker_models` resolved it."""
    found: dict[tuple[str, str], KeyCheck] = {}
    for name, worker in policy.workers.items():
        spec = registry.get(worker.provider)
        key_env = spec.api_key_env if spec is not None else None
        key = env.get(key_env, "").strip() if key_env is not None else ""
        if spec is None or key_env is None or not key or not spec.key_check:
            continue  # a missing key is refused by name before this (check_keys)
        url = (worker.base_url or spec.base_url).rstrip("/") + "/" + LIST_PATH
        # The same host the calls go to, asked of the same rules (ADR 0048).
        origin = check_destination(
            Destination(f"workers.{name} ({spec.name})", key_env, url), trust
        )
        if (str(origin), key_env) in found:
            continue
        wire = pick_wire_format(spec, models[name], worker.wire_format)
        found[(str(origin), key_env)] = KeyCheck(
            spec.name, key_env, url, codec_for(wire).headers(key), _REFUSING[wire]
        )
    return list(found.values())


class KeyChecker:
    """The checks, each on a thread of its own from the moment it is made."""

    def __init__(self, checks: list[KeyCheck], timeout_s: float = TIMEOUT_S) -> None:
        self.checks = checks
        self.timeout_s = timeout_s
        self._answers: dict[int, int | str] = {}  # by check: the status, or why none came
        self._threads = [
            threading.Thread(target=self._ask, args=(i,), name="ssw-key-check", daemon=True)
            for i in range(len(checks))
        ]
        for thread in self._threads:
            thread.start()

    def _ask(self, index: int) -> None:
        check = self.checks[index]
        try:
            with new_http_client(tls=check.url.startswith("https:")) as http:
                response = http.get(check.url, headers=dict(check.headers), timeout=self.timeout_s)
                self._answers[index] = response.status_code
        except httpx.HTTPError as exc:
            self._answers[index] = (
                f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            )

    def refuse_if_refused(self) -> None:
        """Raise AuthError when a check that has answered was refused; waits for none."""
        for index, check in enumerate(self.checks):
            answer = self._answers.get(index)
            if isinstance(answer, int) and answer in check.refusing:
                raise AuthError(
                    f"{check.provider} refused the key in {check.key_env} (HTTP {answer} "
                    f"from {check.url}): set a valid key in {check.key_env}"
                )

    def settle(self) -> list[str]:
        """Wait for every check; raise AuthError on a refusal, else the lines to say of the
        checks that got no answer (not fatal: the first call will say more)."""
        for thread in self._threads:
            thread.join(self.timeout_s + 1.0)
        self.refuse_if_refused()
        said = []
        for index, check in enumerate(self.checks):
            answer = self._answers.get(index, f"no answer within {self.timeout_s:.0f} s")
            if isinstance(answer, str):
                said.append(
                    f"keys: {check.key_env} not checked ({check.provider} at {check.url}: "
                    f"{answer}); the first call will say whether it is taken"
                )
        return said
