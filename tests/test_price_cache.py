"""The user's price cache (ADR 0061): where it lives, one host's prices never another's, a broken
file named with its fix, and which price is in force when the preset and the cache both have one."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from stepswitch.errors import ConfigError
from stepswitch.registry.in_force import price_in_force
from stepswitch.registry.presets import Price, ProviderSpec
from stepswitch.registry.price_cache import cache_dir, read_cached, write_cached
from stepswitch.registry.trust import origin_of

ACME = ProviderSpec.model_validate(
    {
        "name": "acme",
        "display_name": "Acme",
        "base_url": "https://api.acme.test/v1/",
        "api_key_env": "ACME_API_KEY",
        "wire_formats": ["chat-completions"],
        "prices_endpoint": "models",
        "models": {
            "m": {
                "family": "f",
                "price": {"input": 1.0, "output": 2.0, "source": "page", "as_of": "2026-06-01"},
            }
        },
    }
)
OWN = origin_of(ACME.base_url)
GATEWAY = origin_of("http://127.0.0.1:8123/v1/")


def price(figure: float, day: date) -> Price:
    return Price(input=figure, output=figure, source="https://list.test/models", as_of=day)


def keep(origin, figure: float, day: date) -> None:  # type: ignore[no-untyped-def]
    at = datetime(day.year, day.month, day.day, tzinfo=UTC)
    write_cached("acme", origin, f"{origin}/models", at, {"m": price(figure, day)})


@pytest.mark.parametrize(
    ("env", "where"),
    [
        ({"SSW_CACHE_DIR": "/x/cache", "XDG_CACHE_HOME": "/y"}, Path("/x/cache")),
        ({"XDG_CACHE_HOME": "/y"}, Path("/y/stepswitch")),
        ({"XDG_CACHE_HOME": "relative"}, Path.home() / ".cache" / "stepswitch"),  # XDG: ignored
        ({}, Path.home() / ".cache" / "stepswitch"),
    ],
)
def test_the_cache_is_where_the_variables_say(env: dict[str, str], where: Path):
    assert cache_dir(env) == where


def test_a_price_read_from_one_host_is_kept_for_that_host_alone():
    keep(GATEWAY, 5.0, date(2026, 12, 1))

    cached = read_cached("acme", GATEWAY)
    assert cached is not None and cached.prices["m"].input == 5.0
    assert read_cached("acme", OWN) is None
    assert read_cached("acme", origin_of("http://127.0.0.1:8124/v1/")) is None  # another port
    assert price_in_force(ACME, "m", OWN, None) == ACME.models["m"].price  # the preset's


def test_at_the_presets_own_host_the_later_dated_price_wins():
    keep(OWN, 3.0, date(2026, 1, 1))  # read before the preset's own date
    older = price_in_force(ACME, "m", OWN, read_cached("acme", OWN))
    keep(OWN, 4.0, date(2026, 12, 1))
    newer = price_in_force(ACME, "m", OWN, read_cached("acme", OWN))
    keep(GATEWAY, 3.0, date(2026, 1, 1))
    elsewhere = price_in_force(ACME, "m", GATEWAY, read_cached("acme", GATEWAY))

    assert older is not None and older.input == 1.0  # a newer ssw's preset is not shadowed
    assert newer is not None and newer.input == 4.0
    assert elsewhere is not None and elsewhere.input == 3.0  # only that host's own list counts


def test_a_broken_cache_file_is_one_line_naming_it_and_the_fix():
    keep(OWN, 3.0, date(2026, 1, 1))
    cached = read_cached("acme", OWN)
    assert cached is not None
    cached.path.write_text('{"prices": 1}', encoding="utf-8")

    with pytest.raises(ConfigError) as caught:
        read_cached("acme", OWN)
    assert str(cached.path) in str(caught.value) and "delete it" in str(caught.value)
