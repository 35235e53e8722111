"""Provider presets: load and validate registry/providers/*.toml; look up prices and efforts."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from datetime import date
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stepswitch.errors import ConfigError, UsageError

# The preset whose "models" replay a script over loopback: every record it touches says so.
SCRIPTED_PROVIDER = "scripted"

WireFormatName = Literal["chat-completions", "responses", "messages", "generate-content"]
Capability = Literal[
    "tools",
    "parallel_tool_calls",
    "json_schema",
    "streaming",
    "reasoning",
    "prompt_cache",
    "vision",
]
# Efforts from least to most thinking; "nearest" is measured along this order.
EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")
Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Price(_Strict):
    """List prices in US dollars per million tokens. Reasoning tokens bill as output."""

    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)  # None: cached tokens bill as input
    cache_write: float | None = Field(default=None, ge=0)  # None: writes bill as input
    output: float = Field(ge=0)
    source: str = Field(min_length=1)  # where the figure came from (a page, or "local")
    as_of: date


class ModelSpec(_Strict):
    family: str = Field(min_length=1)  # e.g. "nemotron", "gpt-oss": second opinions differ in it
    context_window: int | None = Field(default=None, gt=0)  # None: not known
    max_output_tokens: int | None = Field(default=None, gt=0)
    reasoning_efforts: tuple[Effort, ...] = ()
    capabilities: tuple[Capability, ...] = ()
    # "unknown" must be written out: a missing price is an error, never zero.
    price: Price | Literal["unknown"]
    wire_format: WireFormatName | None = None  # overrides the provider's default

    @property
    def priced(self) -> bool:
        return isinstance(self.price, Price)


class ProviderSpec(_Strict):
    name: str
    display_name: str
    docs: str = ""
    base_url: str
    api_key_env: str | None = None  # None: a local server that takes no key
    wire_formats: tuple[WireFormatName, ...] = Field(min_length=1)  # the first is the default
    local: bool = False
    # Local servers serve whatever model is loaded: accept unlisted ids, free, abilities unknown.
    any_model: bool = False
    prices_endpoint: str | None = None  # relative to base_url; for `ssw prices refresh`
    models: dict[str, ModelSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _hosted_models_are_never_free(self) -> ProviderSpec:
        # A zero price on a hosted model is almost always a missing price in disguise.
        for model_id, model in self.models.items():
            price = model.price
            if not self.local and isinstance(price, Price) and price.input == price.output == 0:
                raise ValueError(
                    f'model {model_id!r} of a hosted provider has price 0; write price = "unknown"'
                )
        return self

    @property
    def default_wire_format(self) -> WireFormatName:
        return self.wire_formats[0]


def registry_dir() -> Path:
    """SSW_REGISTRY, else the copy packaged in the wheel, else the source checkout's registry/."""
    override = os.environ.get("SSW_REGISTRY")
    if override:
        return Path(override)
    packaged = Path(__file__).parents[1] / "_registry"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "registry"


def preset_path(name: str, root: Path | None = None) -> Path:
    return (root or registry_dir()) / "providers" / f"{name}.toml"


def _key_of(error_loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in error_loc) or "(top level)"


def parse_preset(path: Path) -> ProviderSpec:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(str(path), "(file)", "no such preset", "run `ssw models`") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "(syntax)", str(exc), "fix the TOML syntax") from exc
    try:
        spec = ProviderSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            str(path),
            _key_of(first["loc"]),
            first["msg"],
            'see registry/README.md; write price = "unknown" when a price is not known',
        ) from exc
    if spec.name != path.stem:
        raise ConfigError(str(path), "name", f"is {spec.name!r}", f"name it {path.stem!r}")
    return spec


@cache
def _load_all(root: Path) -> dict[str, ProviderSpec]:
    folder = root / "providers"
    if not folder.is_dir():
        raise ConfigError(str(folder), "(folder)", "no provider presets here", "set SSW_REGISTRY")
    return {p.stem: parse_preset(p) for p in sorted(folder.glob("*.toml"))}


def load_registry(root: Path | None = None) -> dict[str, ProviderSpec]:
    return _load_all((root or registry_dir()).resolve())


def clear_cache() -> None:
    _load_all.cache_clear()


def get_provider(name: str, root: Path | None = None) -> ProviderSpec:
    providers = load_registry(root)
    if name not in providers:
        known = ", ".join(sorted(providers))
        raise UsageError(f"unknown provider {name!r}; known providers: {known}")
    return providers[name]


_UNLISTED_LOCAL_MODEL = ModelSpec(
    family="local",
    price=Price(input=0, output=0, source="local server: no charge", as_of=date(2026, 11, 29)),
)


def get_model(provider: ProviderSpec, model_id: str) -> ModelSpec:
    if model_id in provider.models:
        return provider.models[model_id]
    if provider.any_model:
        return _UNLISTED_LOCAL_MODEL
    known = ", ".join(sorted(provider.models)) or "(none)"
    raise UsageError(
        f"unknown model {model_id!r} for provider {provider.name!r} "
        f"(registry/providers/{provider.name}.toml); known models: {known}"
    )


def resolve_effort(model: ModelSpec, wanted: str | None) -> str | None:
    """The accepted effort nearest to `wanted`; ties go to the cheaper one.

    None means "send no effort field": nothing wanted, or a model that takes none.
    """
    if wanted is None:
        return None
    if wanted not in EFFORT_ORDER:
        raise UsageError(
            f"unknown reasoning effort {wanted!r}; use one of {', '.join(EFFORT_ORDER)}"
        )
    if not model.reasoning_efforts:
        return None
    if wanted in model.reasoning_efforts:
        return wanted
    target = EFFORT_ORDER.index(wanted)
    return min(
        model.reasoning_efforts,
        key=lambda e: (abs(EFFORT_ORDER.index(e) - target), EFFORT_ORDER.index(e)),
    )


def key_variables(registry: Mapping[str, ProviderSpec]) -> frozenset[str]:
    """The environment variables that hold the registry's provider keys."""
    return frozenset(s.api_key_env for s in registry.values() if s.api_key_env)
