"""What counts as a secret, and keeping secrets out of text: the one place for both."""

from __future__ import annotations

_SECRET_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_CREDENTIALS")
_SECRET_PARTS = ("PASSWORD", "PASSWD", "SECRET")
_SECRET_NAMES = frozenset({"API_KEY", "TOKEN", "KEY"})


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return (
        upper in _SECRET_NAMES
        or upper.endswith(_SECRET_SUFFIXES)
        or any(part in upper for part in _SECRET_PARTS)
    )


def redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


def bearer_headers(api_key: str | None) -> dict[str, str]:
    """OpenAI-style auth; none for keyless local servers."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
