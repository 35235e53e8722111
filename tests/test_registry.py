"""The shipped provider presets, the preset validator, and model and effort look-ups."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from stepswitch.errors import ConfigError, UsageError
from stepswitch.registry.presets import (
    ModelSpec,
    Price,
    ProviderSpec,
    clear_cache,
    get_model,
    load_registry,
    parse_preset,
    resolve_effort,
)

REGISTRY = Path(__file__).resolve().parents[1] / "registry"
SHIPPED = sorted((REGISTRY / "providers").glob("*.toml"))
LOCAL = {"vllm", "llamacpp", "ollama"}

VALID = """\
name = "acme"
display_name = "Acme"
base_url = "https://api.acme.test/v1/"
api_key_env = "ACME_API_KEY"
wire_formats = ["chat-completions"]

[models.m]
family = "f"
reasoning_efforts = ["low", "high"]

[models.m.price]
input = 1.0
output = 2.0
source = "https://acme.test/pricing"
as_of = 2026-11-29
"""


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def _write(tmp_path: Path, text: str, name: str = "acme") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def shipped() -> dict[str, ProviderSpec]:
    clear_cache()
    return load_registry(REGISTRY)


# --- shipped presets ---


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_preset_validates(path: Path) -> None:
    spec = parse_preset(path)
    assert spec.name == path.stem
    if spec.name == "openai-compatible":  # an address and model ids of the user's (ADR 0061)
        assert not spec.models and spec.base_url.startswith("https://openai-compatible.invalid/")
        return
    assert spec.models, "a preset lists at least one model"


def test_the_expected_presets_ship(shipped: dict[str, ProviderSpec]) -> None:
    expected = {"tokenfactory", "openai", "anthropic", "gemini", "openrouter"} | LOCAL
    assert expected <= set(shipped)


def test_tokenfactory_has_exactly_the_four_models(shipped: dict[str, ProviderSpec]) -> None:
    tf = shipped["tokenfactory"]
    assert set(tf.models) == {
        "nvidia/Nemotron-3_5-Lightning",
        "nvidia/nemotron-3-super-120b-a12b",
        "nvidia/Nemotron-3-Ultra-550b-a55b",
        "openai/gpt-oss-120b",
    }
    assert tf.base_url == "https://api.tokenfactory.nebius.com/v1/"
    assert tf.api_key_env == "NEBIUS_API_KEY"
    assert tf.prices_endpoint == "models?verbose=true"
    assert tf.default_wire_format == "chat-completions"
    assert tf.models["openai/gpt-oss-120b"].family == "gpt-oss"
    assert {m.family for k, m in tf.models.items() if k.startswith("nvidia/")} == {"nemotron"}


def test_hosted_models_are_never_free(shipped: dict[str, ProviderSpec]) -> None:
    for provider in shipped.values():
        if provider.local:
            continue
        assert provider.api_key_env, provider.name
        for model_id, model in provider.models.items():
            price = model.price
            if isinstance(price, str):
                assert price == "unknown", (provider.name, model_id)
                continue
            assert price.input > 0, (provider.name, model_id)
            assert price.output > 0, (provider.name, model_id)
            assert price.source.startswith("https://"), (provider.name, model_id)


def test_local_presets_are_free_and_take_any_model(shipped: dict[str, ProviderSpec]) -> None:
    for name in LOCAL:
        provider = shipped[name]
        assert provider.local and provider.any_model
        assert provider.api_key_env is None
        assert provider.base_url.startswith("http://127.0.0.1:")
        for model in provider.models.values():
            assert isinstance(model.price, Price)
            assert (model.price.input, model.price.output) == (0, 0)
            assert model.price.source == "local server: no charge"


def test_prices_endpoints_where_the_provider_lists_prices(
    shipped: dict[str, ProviderSpec],
) -> None:
    assert shipped["openrouter"].prices_endpoint == "models"
    assert shipped["openai"].default_wire_format == "responses"
    assert shipped["anthropic"].wire_formats == ("messages",)
    assert shipped["gemini"].wire_formats == ("generate-content",)


# --- the "unknown" price ---


def test_unknown_price_loads_as_unknown_not_zero(tmp_path: Path) -> None:
    text = VALID.split("[models.m.price]")[0] + 'price = "unknown"\n'
    model = parse_preset(_write(tmp_path, text)).models["m"]
    assert model.price == "unknown"
    assert not model.priced


# --- malformed presets ---


def _raises_config_error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_preset(path)
    error = caught.value
    assert error.file == str(path)
    assert str(path) in str(error)
    return error


def test_unknown_key_names_file_and_key(tmp_path: Path) -> None:
    path = _write(tmp_path, 'colour = "red"\n' + VALID)
    assert _raises_config_error(path).key == "colour"


def test_missing_price_names_file_and_key(tmp_path: Path) -> None:
    text = VALID.split("[models.m.price]")[0]
    assert _raises_config_error(_write(tmp_path, text)).key == "models.m.price"


def test_negative_price_names_file_and_key(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID.replace("input = 1.0", "input = -1.0"))
    key = _raises_config_error(path).key
    assert key.startswith("models.m.price")
    assert key.endswith("input")


def test_bad_toml_names_file(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID.replace('family = "f"', "family = "))
    assert _raises_config_error(path).key == "(syntax)"


def test_name_and_file_mismatch_names_file_and_key(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID, name="other")
    error = _raises_config_error(path)
    assert error.key == "name"
    assert "other" in str(error)


def test_unknown_effort_name_names_file_and_key(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID.replace('["low", "high"]', '["low", "turbo"]'))
    assert _raises_config_error(path).key == "models.m.reasoning_efforts[1]"


def test_missing_file_raises_config_error(tmp_path: Path) -> None:
    assert _raises_config_error(tmp_path / "acme.toml").key == "(file)"


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("input = 1.0", "input = true", "models.m.price.input"),
        ("input = 1.0", 'input = "1.0"', "models.m.price.input"),
        ('family = "f"', 'family = "f"\ncontext_window = true', "models.m.context_window"),
        (
            'wire_formats = ["chat-completions"]',
            'wire_formats = ["chat-completions"]\nlocal = 1',
            "local",
        ),
    ],
)
def test_a_number_or_flag_of_the_wrong_type_is_refused(
    tmp_path: Path, old: str, new: str, key: str
) -> None:
    assert _raises_config_error(_write(tmp_path, VALID.replace(old, new))).key == key


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("api.acme.test/v1/", "is not an http:// or https:// URL"),
        ("https://", "has no host"),
        ("https://api.acme.test:443x/v1/", "is not a URL"),
    ],
)
def test_a_base_url_that_cannot_be_called_names_the_url(
    tmp_path: Path, url: str, problem: str
) -> None:
    text = VALID.replace('"https://api.acme.test/v1/"', f'"{url}"')
    error = _raises_config_error(_write(tmp_path, text))
    assert error.key == "base_url"
    assert error.problem.startswith(f"{url!r} {problem}")
    assert "e.g. http://127.0.0.1:8080/v1/" in error.problem


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'name = "acme"\x00', "is binary (a NUL byte at offset 13), not a provider preset"),
        (b'display_name = "Acm\xe9"', "is not UTF-8 text (byte 0xe9 at offset 19)"),
    ],
)
def test_a_binary_or_non_utf8_preset_is_a_config_error(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "acme.toml"
    path.write_bytes(content)
    error = _raises_config_error(path)
    assert (error.key, error.problem) == ("(file)", problem)


def test_a_folder_named_like_a_preset_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "acme.toml").mkdir()
    error = _raises_config_error(tmp_path / "acme.toml")
    assert (error.key, error.problem) == ("(file)", "is a folder, not a provider preset")


# --- efforts ---


def _model(*efforts: str) -> ModelSpec:
    return ModelSpec.model_validate(
        {
            "family": "f",
            "reasoning_efforts": efforts,
            "price": {"input": 1, "output": 2, "source": "s", "as_of": date(2026, 11, 29)},
        }
    )


@pytest.mark.parametrize(
    ("efforts", "wanted", "expected"),
    [
        (("low", "medium", "high"), "medium", "medium"),  # accepted as asked
        (("minimal", "high"), "xhigh", "high"),  # nearest below
        (("low", "medium"), "none", "low"),  # nearest above
        (("low", "high"), "medium", "low"),  # tie goes to the cheaper one
        (("none", "low"), "minimal", "none"),  # tie, cheaper is "none"
        (("minimal", "low", "medium", "high"), "xhigh", "high"),
    ],
)
def test_resolve_effort_picks_nearest_accepted(
    efforts: tuple[str, ...], wanted: str, expected: str
) -> None:
    assert resolve_effort(_model(*efforts), wanted) == expected


def test_resolve_effort_none_for_models_without_efforts() -> None:
    assert resolve_effort(_model(), "high") is None


def test_resolve_effort_none_when_nothing_wanted() -> None:
    assert resolve_effort(_model("low", "high"), None) is None


def test_resolve_effort_rejects_unknown_names() -> None:
    with pytest.raises(UsageError, match="turbo"):
        resolve_effort(_model("low"), "turbo")


def test_shipped_efforts_resolve(shipped: dict[str, ProviderSpec]) -> None:
    haiku = shipped["anthropic"].models["claude-haiku-4-5"]
    assert resolve_effort(haiku, "high") is None
    gpt5 = shipped["openai"].models["gpt-5-mini"]
    assert resolve_effort(gpt5, "xhigh") == "high"
    assert resolve_effort(gpt5, "none") == "minimal"


# --- get_model ---


def test_get_model_unknown_id_names_known_models(shipped: dict[str, ProviderSpec]) -> None:
    tf = shipped["tokenfactory"]
    with pytest.raises(UsageError) as caught:
        get_model(tf, "nvidia/not-a-model")
    message = str(caught.value)
    assert "nvidia/not-a-model" in message
    for known in tf.models:
        assert known in message


def test_get_model_local_any_model_accepts_unlisted_ids_for_free(
    shipped: dict[str, ProviderSpec],
) -> None:
    model = get_model(shipped["ollama"], "some-model-i-pulled:latest")
    assert isinstance(model.price, Price)
    assert (model.price.input, model.price.output) == (0, 0)


def test_get_model_listed_id(shipped: dict[str, ProviderSpec]) -> None:
    model = get_model(shipped["anthropic"], "claude-sonnet-5")
    assert model.family == "claude"


def test_a_hosted_model_priced_at_zero_is_refused_as_a_missing_price(tmp_path: Path) -> None:
    text = VALID.replace("input = 1.0", "input = 0.0").replace("output = 2.0", "output = 0.0")
    error = _raises_config_error(_write(tmp_path, text))
    assert 'price = "unknown"' in str(error)


def test_every_preset_key_variable_is_taken_out_of_the_environment_at_start():
    from stepswitch.registry.presets import load_registry
    from stepswitch.util.secrets import is_secret_name

    names = [s.api_key_env for s in load_registry().values() if s.api_key_env]
    assert names and all(is_secret_name(n) for n in names)
