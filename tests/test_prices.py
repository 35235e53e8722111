"""`refresh_prices` against a real HTTP server on 127.0.0.1 serving recorded model lists."""

from __future__ import annotations

import shutil
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from stepswitch.errors import AuthError, ProviderError, UsageError
from stepswitch.registry.presets import parse_preset
from stepswitch.registry.refresh import NOT_IN_PRESET, PriceChange, refresh_prices

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "prices"
TODAY = date(2026, 12, 1)
KEY = "sk-test-SECRET-4242"


@dataclass
class Route:
    status: int
    body: bytes
    content_type: str = "application/json"


@dataclass
class Served:
    base: str
    routes: dict[str, Route]
    seen: list[tuple[str, str | None]] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.served.seen.append((self.path, self.headers.get("Authorization")))
        route = self.server.served.routes.get(self.path, Route(404, b'{"error": "not found"}'))
        self.send_response(route.status)
        self.send_header("Content-Type", route.content_type)
        self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        self.wfile.write(route.body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep pytest output clean


class _Server(ThreadingHTTPServer):
    served: Served


@pytest.fixture
def server() -> Iterator[Served]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    host, port = httpd.server_address[0], httpd.server_address[1]
    httpd.served = Served(base=f"http://{host!s}:{port}", routes={})
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd.served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _copy_preset(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / "providers"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.toml"
    shutil.copy(ROOT / "registry" / "providers" / f"{name}.toml", target)
    return target


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _changes_by_key(changes: list[PriceChange]) -> dict[tuple[str, str], PriceChange]:
    return {(c.model, c.field): c for c in changes}


def test_tokenfactory_refresh_rewrites_prices(server: Served, tmp_path: Path) -> None:
    server.routes["/v1/models?verbose=true"] = Route(
        200, _fixture("tokenfactory_models_verbose.json")
    )
    preset = _copy_preset("tokenfactory", tmp_path)
    before = tomllib.loads(preset.read_text(encoding="utf-8"))
    provider = parse_preset(preset)

    changes = refresh_prices(
        provider, preset, base_url=f"{server.base}/v1/", api_key=KEY, today=TODAY
    )

    assert server.seen == [("/v1/models?verbose=true", f"Bearer {KEY}")]
    after = parse_preset(preset)  # still a valid preset
    lightning = after.models["nvidia/Nemotron-3_5-Lightning"].price
    assert not isinstance(lightning, str)
    # 0.00000011 $/token is 0.11 $/million: converted exactly, not 0.10999999...
    assert lightning.input == 0.11
    assert lightning.output == 0.33
    assert lightning.cached_input is None
    assert lightning.source == f"{server.base}/v1/models?verbose=true"
    assert lightning.as_of == TODAY
    oss = after.models["openai/gpt-oss-120b"].price
    assert not isinstance(oss, str)
    assert (oss.input, oss.output) == (0.13, 0.52)

    by_key = _changes_by_key(changes)
    assert by_key[("nvidia/Nemotron-3_5-Lightning", "input")] == PriceChange(
        "nvidia/Nemotron-3_5-Lightning", "input", "unknown", 0.11
    )
    assert by_key[("nvidia/Nemotron-3-Ultra-550b-a55b", "output")].new == 2.64
    # A listed model missing from the preset is reported, not added.
    assert by_key[("Qwen/Qwen3-Embedding-8B", NOT_IN_PRESET)].unlisted
    assert "Qwen/Qwen3-Embedding-8B" not in after.models

    # Everything outside the price tables is as it was.
    raw = tomllib.loads(preset.read_text(encoding="utf-8"))
    for key in ("name", "display_name", "docs", "base_url", "api_key_env", "prices_endpoint"):
        assert raw[key] == before[key]
    assert raw["wire_formats"] == before["wire_formats"]
    for model_id, spec in before["models"].items():
        kept = {k: v for k, v in raw["models"][model_id].items() if k != "price"}
        assert kept == {k: v for k, v in spec.items() if k != "price"}
    assert list(raw["models"]) == list(before["models"])


def test_second_refresh_with_same_listing_reports_no_price_change(
    server: Served, tmp_path: Path
) -> None:
    server.routes["/v1/models?verbose=true"] = Route(
        200, _fixture("tokenfactory_models_verbose.json")
    )
    preset = _copy_preset("tokenfactory", tmp_path)
    provider = parse_preset(preset)
    base = f"{server.base}/v1/"
    refresh_prices(provider, preset, base_url=base, api_key=KEY, today=TODAY)

    again = refresh_prices(provider, preset, base_url=base, api_key=KEY, today=TODAY)

    assert [c for c in again if not c.unlisted] == []


def test_openrouter_refresh_reads_cache_prices_and_skips_routed_models(
    server: Served, tmp_path: Path
) -> None:
    server.routes["/api/v1/models"] = Route(200, _fixture("openrouter_models.json"))
    preset = _copy_preset("openrouter", tmp_path)
    provider = parse_preset(preset)
    untouched_before = provider.models["openai/gpt-5-pro"].price

    changes = refresh_prices(
        provider, preset, base_url=f"{server.base}/api/v1", api_key=None, today=TODAY
    )

    assert server.seen == [("/api/v1/models", None)]  # no key given, no header sent
    after = parse_preset(preset)
    mini = after.models["openai/gpt-5-mini"].price
    assert not isinstance(mini, str)
    assert (mini.input, mini.cached_input, mini.output) == (0.3, 0.03, 2.4)
    haiku = after.models["anthropic/claude-haiku-4.5"].price
    assert not isinstance(haiku, str)
    assert (haiku.input, haiku.cached_input, haiku.cache_write, haiku.output) == (
        1.2,
        0.12,
        1.5,
        6.0,
    )
    # Models the listing does not mention keep their price table as it was.
    assert after.models["openai/gpt-5-pro"].price == untouched_before
    by_key = _changes_by_key(changes)
    assert by_key[("openai/gpt-5-mini", "input")].old == 0.25
    assert by_key[("openai/gpt-5-mini", "cached_input")] == PriceChange(
        "openai/gpt-5-mini", "cached_input", None, 0.03
    )
    assert by_key[("openrouter/auto", NOT_IN_PRESET)].unlisted


def test_bad_json_raises_provider_error_with_raw_body(server: Served, tmp_path: Path) -> None:
    server.routes["/v1/models?verbose=true"] = Route(200, b"<html>maintenance</html>", "text/html")
    preset = _copy_preset("tokenfactory", tmp_path)
    original = preset.read_text(encoding="utf-8")

    with pytest.raises(ProviderError) as caught:
        refresh_prices(
            parse_preset(preset), preset, base_url=f"{server.base}/v1/", api_key=KEY, today=TODAY
        )

    assert "<html>maintenance</html>" in caught.value.raw_body
    assert preset.read_text(encoding="utf-8") == original


@pytest.mark.parametrize(
    "body",
    [
        b'{"object": "list"}',
        b'{"data": [{"id": "x", "pricing": {"prompt": "cheap", "completion": "1"}}]}',
        b'[{"id": "x"}]',
    ],
)
def test_malformed_listing_raises_provider_error_not_key_error(
    server: Served, tmp_path: Path, body: bytes
) -> None:
    server.routes["/v1/models?verbose=true"] = Route(200, body)
    preset = _copy_preset("tokenfactory", tmp_path)

    with pytest.raises(ProviderError) as caught:
        refresh_prices(
            parse_preset(preset), preset, base_url=f"{server.base}/v1/", api_key=KEY, today=TODAY
        )

    assert caught.value.raw_body == body.decode()


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_raises_auth_error_without_the_key(
    server: Served, tmp_path: Path, status: int
) -> None:
    # A server that echoes the key back must not leak it through the error either.
    echo = f'{{"detail": "bad token {KEY}"}}'.encode()
    server.routes["/v1/models?verbose=true"] = Route(status, echo)
    preset = _copy_preset("tokenfactory", tmp_path)

    with pytest.raises(AuthError) as caught:
        refresh_prices(
            parse_preset(preset), preset, base_url=f"{server.base}/v1/", api_key=KEY, today=TODAY
        )

    error = caught.value
    assert error.status == status
    assert "NEBIUS_API_KEY" in str(error)
    assert KEY not in str(error)
    assert KEY not in error.raw_body
    assert KEY not in repr(error.args)


def test_server_error_raises_provider_error(server: Served, tmp_path: Path) -> None:
    server.routes["/v1/models?verbose=true"] = Route(502, b'{"error": "upstream"}')
    preset = _copy_preset("tokenfactory", tmp_path)

    with pytest.raises(ProviderError) as caught:
        refresh_prices(
            parse_preset(preset), preset, base_url=f"{server.base}/v1/", api_key=KEY, today=TODAY
        )

    assert not isinstance(caught.value, AuthError)
    assert caught.value.status == 502


def test_unreachable_server_raises_provider_error_without_the_key(tmp_path: Path) -> None:
    preset = _copy_preset("tokenfactory", tmp_path)
    # Port 9 on loopback: nothing listens, the connection is refused at once.
    with pytest.raises(ProviderError) as caught:
        refresh_prices(
            parse_preset(preset),
            preset,
            base_url="http://127.0.0.1:9/v1/",
            api_key=KEY,
            today=TODAY,
        )
    assert KEY not in str(caught.value)


def test_provider_without_prices_endpoint_raises_usage_error(tmp_path: Path) -> None:
    preset = _copy_preset("anthropic", tmp_path)

    with pytest.raises(UsageError, match="anthropic"):
        refresh_prices(parse_preset(preset), preset, api_key=KEY, today=TODAY)


def test_changes_read_as_one_line_each() -> None:
    assert str(PriceChange("a/b", "input", "unknown", 0.11)) == (
        "a/b: input unknown -> 0.11 $/1M tokens"
    )
    assert str(PriceChange("a/b", "cached_input", None, 0.03)) == (
        "a/b: cached_input absent -> 0.03 $/1M tokens"
    )
    assert "not in the preset" in str(PriceChange("c/d", NOT_IN_PRESET, None, None))
