"""The one place that owns deadlines, retries and request ids for provider calls."""

from __future__ import annotations

import contextlib
import email.utils
import json
import random
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from stepswitch.errors import (
    AuthError,
    DeadlineExceeded,
    MalformedResponse,
    ProviderError,
    RetriesExhausted,
)
from stepswitch.util.secrets import redact
from stepswitch.wire.codec import Codec, request_id_from_headers
from stepswitch.wire.shape import scrub_opaque
from stepswitch.wire.sse import read_events
from stepswitch.wire.types import (
    Attempt,
    AttemptKind,
    CallHooks,
    Completion,
    Message,
    Request,
)

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
_BODY_KEEP = 20_000


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    base_delay: float = 0.5  # seconds; doubled per attempt, with full jitter
    max_delay: float = 30.0


_warming: threading.Thread | None = None


def _import_transport() -> None:
    with contextlib.suppress(Exception):  # the import proper, in new_http_client, says what failed
        import httpcore  # noqa: F401


def warm_up_http() -> None:
    """Import httpcore in a background thread, once per process: it imports the async libraries
    installed beside it (anyio, and trio when present), 40-200 ms that a run otherwise pays
    before its first call, while it mostly waits on git and the gates' pre-flight."""
    global _warming
    if _warming is None and "httpcore" not in sys.modules:
        _warming = threading.Thread(target=_import_transport, name="ssw-warm-http", daemon=True)
        _warming.start()


def tls_context(tls: bool) -> ssl.SSLContext:
    """The TLS context httpx makes for a client: `tls`, verifying against its CA bundle (or
    SSL_CERT_FILE / SSL_CERT_DIR); else the one a plain-HTTP client holds and never uses."""
    return httpx.create_ssl_context(verify=tls)


def new_http_client(tls: bool = True, context: ssl.SSLContext | None = None) -> httpx.Client:
    """One connection pool. `tls=False` is for plain-HTTP servers only (local, loopback): it
    skips loading the CA bundle, which costs 50-200 ms, and such a client cannot speak https.
    `context`: `tls_context(tls)`, made ahead (agent/providers.py `expect`)."""
    # TCP_NODELAY: without it, headers and body leave in two segments and Nagle plus delayed
    # ACK can hold the body ~40 ms per call.
    if _warming is not None:
        _warming.join()
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    inner = httpx.HTTPTransport(socket_options=options, verify=context or tls_context(tls))
    transport: httpx.BaseTransport = inner if tls else _PlainHttpOnly(inner)
    return httpx.Client(transport=transport, follow_redirects=False)


class _PlainHttpOnly(httpx.BaseTransport):
    """Refuses https, so a client built without certificates can never send an unverified
    TLS request by mistake."""

    def __init__(self, inner: httpx.HTTPTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"this client speaks plain http only: {request.url}")
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds: either a number or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class _Retryable(Exception):
    def __init__(
        self,
        message: str,
        status: int | None,
        request_id: str | None,
        wait: float | None,
        sent: bool = True,
        refused: bool = False,  # an HTTP error status at the response's head
    ):
        super().__init__(message)
        self.status = status
        self.request_id = request_id
        self.wait = wait
        self.sent = sent
        self.refused = refused


class HttpProvider:
    """Speaks one wire format to one base URL. `complete` is the Provider protocol."""

    def __init__(
        self,
        codec: Codec,
        base_url: str,
        *,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        http: httpx.Client | None = None,
        on_attempt: Callable[[Attempt], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.codec = codec
        self.base_url = base_url
        self._api_key = api_key
        self.retry = retry or RetryPolicy()
        self._http = http or new_http_client()
        self._on_attempt = on_attempt
        self._sleep = sleep
        self._jitter = jitter

    def close(self) -> None:
        self._http.close()

    def complete(
        self,
        request: Request,
        *,
        deadline: float,
        timeout: float | None = None,
        hooks: CallHooks | None = None,
    ) -> Completion:
        """Call the provider, retrying transient faults, finishing by the earlier of
        `deadline` (time.monotonic() by which the run must end) and now + `timeout`."""
        start = time.monotonic()
        call_deadline = deadline if timeout is None else min(deadline, start + timeout)
        by_timeout = timeout is not None and start + timeout <= deadline + 1e-6
        limit = (
            f"the worker's timeout of {timeout:g} s"
            if by_timeout and timeout is not None
            else f"the run's remaining {max(0.0, deadline - start):.3g} s"
        )
        body = json.dumps(self.codec.encode(_own_state_only(request, self.base_url))).encode()
        url = self.codec.url(self.base_url, request)
        headers = {"Content-Type": "application/json", **self.codec.headers(self._api_key)}
        last: _Retryable | None = None
        hooks = hooks or CallHooks()
        for number in range(1, self.retry.max_attempts + 1):
            remaining = call_deadline - time.monotonic()
            if remaining <= 0:
                raise self._deadline_error(last, url, limit)
            if hooks.before_attempt is not None:
                hooks.before_attempt(number, len(body))
            began = time.monotonic()
            try:
                completion = self._attempt(url, headers, body, request.stream, call_deadline)
            except _Retryable as exc:
                last = exc
                kind: AttemptKind = "refused" if exc.refused else "failed"
                attempt = Attempt(
                    number, exc.status, str(exc), 0.0, exc.request_id, sent=exc.sent, kind=kind
                )
                self._record(attempt, began, hooks)
            except ProviderError as exc:
                kind = "refused" if exc.refused else "failed"
                attempt = Attempt(number, exc.status, str(exc), 0.0, exc.request_id, kind=kind)
                self._record(attempt, began, hooks)
                if isinstance(exc, DeadlineExceeded):
                    raise DeadlineExceeded(
                        f"{exc}: no answer from {url} within {limit}",
                        status=exc.status,
                        request_id=exc.request_id,
                    ) from exc
                if isinstance(exc, AuthError) or exc.status not in RETRYABLE_STATUS:
                    raise
                # e.g. Anthropic's `overloaded` (529) arriving as an event inside a stream
                last = _Retryable(str(exc), exc.status, exc.request_id, None)
            else:
                completion = _bind_state(completion, request.model, self.base_url)
                attempt = Attempt(
                    number, 200, None, 0.0, completion.request_id, completion, kind="answered"
                )
                self._record(attempt, began, hooks)
                return completion
            if number == self.retry.max_attempts:
                break
            wait = self._backoff(number, last.wait)
            if time.monotonic() + wait >= call_deadline:
                raise self._deadline_error(last, url, limit)
            self._sleep(wait)
        assert last is not None
        raise RetriesExhausted(
            f"gave up after {self.retry.max_attempts} attempts at {url}: {last}",
            status=last.status,
            request_id=last.request_id,
        )

    def _backoff(self, number: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        ceiling = min(self.retry.max_delay, self.retry.base_delay * 2.0 ** (number - 1))
        return ceiling * self._jitter()

    def _deadline_error(self, last: _Retryable | None, url: str, limit: str) -> DeadlineExceeded:
        why = f" (last error: {last})" if last else ""
        return DeadlineExceeded(
            f"no answer from {url} within {limit}{why}",
            status=last.status if last else None,
            request_id=last.request_id if last else None,
        )

    def _record(self, attempt: Attempt, began: float, hooks: CallHooks) -> None:
        attempt = replace(attempt, latency_s=time.monotonic() - began)
        if self._on_attempt is not None:
            self._on_attempt(attempt)
        if hooks.after_attempt is not None:
            hooks.after_attempt(attempt)

    def _attempt(
        self, url: str, headers: dict[str, str], body: bytes, stream: bool, deadline: float
    ) -> Completion:
        timeout = httpx.Timeout(max(0.001, deadline - time.monotonic()))
        try:
            with self._http.stream(
                "POST", url, content=body, headers=headers, timeout=timeout
            ) as response:
                rid = request_id_from_headers(response.headers)
                if response.status_code >= 400:
                    text = self._read_text(response, deadline)
                    raise self._status_error(response.status_code, text, response.headers, rid)
                if stream:
                    lines = _lines_until(response.iter_lines(), deadline)
                    return self.codec.decode_stream(read_events(lines), rid)
                text = self._read_text(response, deadline)
        except httpx.TimeoutException as exc:
            raise DeadlineExceeded(f"timed out: {type(exc).__name__}") from exc
        except httpx.InvalidURL as exc:  # configuration refuses bad URLs first: a backstop
            raise ProviderError(f"invalid URL {url}: {exc}") from exc
        except (httpx.ConnectError, httpx.UnsupportedProtocol) as exc:
            # The request never left: nothing can have been billed.
            why = f"connection error: {type(exc).__name__}: {exc}"
            raise _Retryable(why, None, None, None, sent=False) from exc
        except (httpx.TransportError, httpx.DecodingError) as exc:
            # Connection reset, or the body cut short: transient.
            raise _Retryable(f"connection error: {type(exc).__name__}", None, None, None) from exc
        except MalformedResponse as exc:
            exc.raw_body = self._clean(exc.raw_body)
            raise
        try:
            parsed: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MalformedResponse(
                "response body is not JSON", status=200, raw_body=self._clean(text), request_id=rid
            ) from exc
        try:
            return self.codec.decode(parsed, rid)
        except MalformedResponse as exc:
            exc.raw_body = self._clean(exc.raw_body or text)
            exc.request_id = exc.request_id or rid
            raise

    def _read_text(self, response: httpx.Response, deadline: float) -> str:
        chunks: list[bytes] = []
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise DeadlineExceeded("the response was still arriving at the deadline")
        return b"".join(chunks).decode("utf-8", errors="replace")

    def _clean(self, text: str) -> str:
        return scrub_opaque(redact(text, (self._api_key or "",)))[:_BODY_KEEP]

    def _status_error(
        self, status: int, text: str, headers: Mapping[str, str], rid: str | None
    ) -> Exception:
        body = self._clean(text)
        if status in (401, 403):
            return AuthError(
                f"the provider refused the key (HTTP {status}); check the key variable",
                status=status,
                raw_body=body,
                request_id=rid,
                refused=True,
            )
        if status in RETRYABLE_STATUS:
            wait = retry_after_seconds(headers.get("retry-after"))
            return _Retryable(f"HTTP {status}", status, rid, wait, refused=True)
        return ProviderError(
            f"HTTP {status}: {body[:300]}",
            status=status,
            raw_body=body,
            request_id=rid,
            refused=True,
        )


def _own_state_only(request: Request, origin: str) -> Request:
    """The request without reasoning state from another provider: it is never shown to one."""

    def foreign(message: Message) -> bool:
        state = message.reasoning_state
        return state is not None and state.provider != origin

    if not any(foreign(m) for m in request.messages):
        return request
    kept = tuple(replace(m, reasoning_state=None) if foreign(m) else m for m in request.messages)
    return replace(request, messages=kept)


def _bind_state(completion: Completion, model: str, origin: str) -> Completion:
    """Key the turn's reasoning state by the model id asked for (the served id is often a dated
    variant of it) and by this provider, so only the same model here gets it back."""
    state = completion.message.reasoning_state
    if state is None:
        return completion
    bound = replace(state, model=model, provider=origin)
    return replace(completion, message=replace(completion.message, reasoning_state=bound))


def _lines_until(lines: Iterator[str], deadline: float) -> Iterator[str]:
    for line in lines:
        if time.monotonic() > deadline:
            raise DeadlineExceeded("the stream was still arriving at the deadline")
        yield line
