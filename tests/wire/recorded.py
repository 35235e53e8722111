"""The recorded payloads in tests/fixtures/<format>/, as the codec tests read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import MalformedResponse, ProviderError
from stepswitch.wire.codec import Codec
from stepswitch.wire.sse import read_events
from stepswitch.wire.types import Completion

FIXTURES = Path(__file__).parent.parent / "fixtures"


def recorded_body(folder: str, name: str) -> Any:
    """A recorded JSON body without its `_source` note."""
    body = json.loads((FIXTURES / folder / name).read_text())
    body.pop("_source")
    return body


def recorded_stream(
    codec: Codec, folder: str, name: str, request_id: str | None = None
) -> Completion:
    """A recorded server-sent-event stream, decoded."""
    lines = (FIXTURES / folder / name).read_text().splitlines(keepends=True)
    return codec.decode_stream(read_events(lines), request_id)


def malformed(codec: Codec, body: Any) -> MalformedResponse:
    """The MalformedResponse `codec` raises decoding `body` (never a KeyError or TypeError)."""
    with pytest.raises(MalformedResponse) as caught:
        codec.decode(body, None)
    return caught.value


def stream_error(codec: Codec, folder: str, name: str, request_id: str) -> ProviderError:
    """The ProviderError `codec` raises decoding the recorded stream `name`."""
    with pytest.raises(ProviderError) as caught:
        recorded_stream(codec, folder, name, request_id)
    return caught.value
