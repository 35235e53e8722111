"""What counts as a secret, and keeping secrets out of text: the one place for both."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

# A name that is one of these, or ends in "_" and one of these, names a secret.
_SECRET_ENDINGS = (
    "API_KEY", "KEY", "TOKEN", "SECRET", "CREDENTIALS", "CREDENTIAL", "PAT", "DSN", "COOKIE",
    "AUTH", "PASS", "WEBHOOK", "WEBHOOK_URL",
)  # fmt: skip
_SECRET_SUFFIXES = tuple(f"_{ending}" for ending in _SECRET_ENDINGS)
_SECRET_PARTS = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET")
# Query parameters that carry a credential although their name alone would not say so.
_SECRET_PARAMETERS = frozenset({"PWD", "APIKEY", "SIG", "SIGNATURE"})
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# user:password@ before the host; the password may hold "/" when its writer did not encode it.
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s:]*:[^@\s]+@", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """A variable named like a key, a token, a password, a credential or a webhook, or
    OpenTelemetry's exporter headers (OTEL_EXPORTER_OTLP_HEADERS: a collector's key goes there)."""
    upper = name.upper()
    return (
        upper in _SECRET_ENDINGS
        or upper.endswith(_SECRET_SUFFIXES)
        or any(part in upper for part in _SECRET_PARTS)
        or (upper.startswith("OTEL_EXPORTER_") and upper.endswith("_HEADERS"))
    )


def _url_carries_secret(value: str) -> bool:
    if not _URL.match(value):
        return False
    if _URL_PASSWORD.match(value):
        return True
    try:
        query = urlsplit(value).query
    except ValueError:  # a malformed URL (a bad port, an unclosed bracket) hides nothing here
        return False
    # parse_qsl leaves out parameters without a value.
    return any(
        is_secret_name(key) or key.upper() in _SECRET_PARAMETERS for key, _ in parse_qsl(query)
    )


def looks_secret(name: str, value: str) -> bool:
    """The one test of whether an environment variable holds a secret: by its name, or a URL
    that carries a password (DATABASE_URL=postgres://u:p@h, ...?password=p)."""
    return is_secret_name(name) or _url_carries_secret(value)


def redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


def bearer_headers(api_key: str | None) -> dict[str, str]:
    """OpenAI-style auth; none for keyless local servers."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
