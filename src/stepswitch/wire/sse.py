"""A small server-sent-events reader over an iterator of text lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from stepswitch.wire.types import ServerSentEvent


def read_events(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Yield one event per blank-line-terminated block; `data: [DONE]` ends the stream."""
    event: str | None = None
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                text = "\n".join(data)
                if text.strip() == "[DONE]":
                    return
                yield ServerSentEvent(event, text)
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data and "\n".join(data).strip() != "[DONE]":
        yield ServerSentEvent(event, "\n".join(data))
